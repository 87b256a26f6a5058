// Wireshark's packet-details tree. Nodes on the way to an expert-info item (the analysis flags:
// "TCP window specified by the receiver is now completely full", …) start expanded, as that is
// what a click on a graph mark came to read.

import { useEffect, useRef, useState } from "react";
import type { TreeNode } from "./protocol";

export function leadsToExpertInfo(node: TreeNode): boolean {
  return node.filter.startsWith("_ws.expert") || node.children.some(leadsToExpertInfo);
}

function Node(props: {
  inExpert?: boolean;
  node: TreeNode;
  depth: number;
  selected: TreeNode | null;
  onSelect: (n: TreeNode) => void;
}) {
  const { node } = props;
  const [open, setOpen] = useState(() => leadsToExpertInfo(node));
  const hasChildren = node.children.length > 0;
  // Expert info (Wireshark's warnings and notes) and everything under it, as Wireshark highlights it.
  const expert = props.inExpert === true || node.filter.startsWith("_ws.expert");
  return (
    <li>
      <button
        type="button"
        aria-expanded={hasChildren ? open : undefined}
        aria-pressed={props.selected === node}
        className={`tree-label${props.selected === node ? " selected" : ""}${expert ? " expert" : ""}`}
        style={{ paddingLeft: `${0.3 + props.depth * 1.1}rem` }}
        onClick={() => {
          props.onSelect(node);
          if (hasChildren) setOpen(!open);
        }}
        title={node.filter || undefined}
      >
        <span className="tree-toggle" aria-hidden="true">
          {hasChildren ? (open ? "▾" : "▸") : ""}
        </span>
        {node.label}
      </button>
      {hasChildren && open ? (
        <ul>
          {node.children.map((child, i) => (
            <Node
              // biome-ignore lint/suspicious/noArrayIndexKey: a tree's children are positional (labels repeat)
              key={`${i}:${child.label}`}
              node={child}
              inExpert={expert}
              depth={props.depth + 1}
              selected={props.selected}
              onSelect={props.onSelect}
            />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

export function ProtoTreeView(props: {
  tree: readonly TreeNode[];
  selected: TreeNode | null;
  onSelect: (n: TreeNode) => void;
}) {
  const ref = useRef<HTMLUListElement>(null);
  // Scroll the first expert-info line into view: it is why the user opened this packet.
  useEffect(() => {
    const expert =
      props.tree.length > 0 ? ref.current?.querySelector<HTMLElement>(".tree-label.expert") : null;
    if (expert && ref.current) ref.current.scrollTop = Math.max(0, expert.offsetTop - 60);
  }, [props.tree]);
  return (
    <ul ref={ref} className="proto-tree" data-testid="packet-tree">
      {props.tree.map((node, i) => (
        <Node
          // biome-ignore lint/suspicious/noArrayIndexKey: a tree's children are positional (labels repeat)
          key={`${i}:${node.label}`}
          node={node}
          depth={0}
          selected={props.selected}
          onSelect={props.onSelect}
        />
      ))}
    </ul>
  );
}
