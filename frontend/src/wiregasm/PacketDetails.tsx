// Packet details of the flow, dissected in the browser by Wireshark (Wiregasm in a worker): the
// packet list, the selected packet's tree and its bytes. Nothing is downloaded until the user
// opens a packet or asks for the list (Wiregasm is ~19 MB compressed).

import { useEffect, useState } from "react";
import type { WiregasmClient } from "./client";
import { HexView } from "./HexView";
import { PacketList } from "./PacketList";
import { ProtoTreeView } from "./ProtoTreeView";
import type { FrameDetails, TreeNode } from "./protocol";
import { useDissector } from "./useDissector";
import "./wiregasm.css";

export function PacketDetails(props: {
  capturePath: string;
  filter: string | null;
  selected: number | null;
  onSelect: (frame: number | null) => void;
}) {
  const { dissector, state } = useDissector(props.capturePath);
  const [client, setClient] = useState<WiregasmClient | null>(null);
  const [wanted, setWanted] = useState(props.selected !== null);
  const [frame, setFrame] = useState<FrameDetails | null>(null);
  const [node, setNode] = useState<TreeNode | null>(null);
  const [frameError, setFrameError] = useState<string | null>(null);

  useEffect(() => {
    if (props.selected !== null) setWanted(true);
  }, [props.selected]);

  useEffect(() => {
    if (!wanted || !dissector) return;
    let cancelled = false;
    dissector.open().then(
      (c) => {
        if (!cancelled) setClient(c);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [wanted, dissector]);

  useEffect(() => {
    if (!client || props.selected === null) {
      setFrame(null);
      return;
    }
    let cancelled = false;
    setFrameError(null);
    client.frame(props.selected).then(
      (f) => {
        if (cancelled) return;
        setFrame(f);
        setNode(null);
      },
      (e: Error) => {
        if (!cancelled) setFrameError(e.message);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [client, props.selected]);

  if (!wanted) {
    return (
      <section className="packet-details packet-details--idle" aria-label="Packet details">
        <p>
          Click a mark or a segment on the graph to open that packet in Wireshark's dissection, or{" "}
          <button type="button" onClick={() => setWanted(true)}>
            list this flow's packets
          </button>
          . Wireshark runs in your browser (about 19 MB, downloaded once).
        </p>
      </section>
    );
  }

  if (state.status === "error") {
    return (
      <section className="packet-details" aria-label="Packet details">
        <p role="alert" className="packet-details-error">
          Packet details are unavailable: {state.message}{" "}
          <button type="button" onClick={() => dissector?.open().then(setClient, () => undefined)}>
            Try again
          </button>
        </p>
      </section>
    );
  }

  if (state.status !== "ready" || !client) {
    const progress = state.status === "loading" ? state.progress : { stage: "Starting…" };
    return (
      <section className="packet-details" aria-label="Packet details" aria-busy="true">
        <div className="wiregasm-progress" data-testid="wiregasm-progress">
          <span>{progress.stage}</span>
          <progress
            max={1}
            {...(progress.fraction !== undefined ? { value: progress.fraction } : {})}
            aria-label="Loading Wireshark"
          />
        </div>
      </section>
    );
  }

  const source = frame?.sources[node?.dataSource ?? 0] ?? frame?.sources[0];
  return (
    <section className="packet-details" aria-label="Packet details" data-testid="packet-details">
      <header className="packet-details-head">
        <strong>Packets</strong>
        <span className="packet-details-version">
          dissected by Wireshark {state.summary.wiresharkVersion} in your browser
        </span>
      </header>
      {props.filter ? (
        <PacketList
          client={client}
          filter={props.filter}
          columns={state.summary.columns}
          selected={props.selected}
          onSelect={props.onSelect}
        />
      ) : null}
      {frameError ? <p role="alert">{frameError}</p> : null}
      {frame ? (
        <div className="packet-panes">
          <div className="packet-tree-pane">
            <div className="pane-title">Frame {frame.number}</div>
            <ProtoTreeView tree={frame.tree} selected={node} onSelect={setNode} />
          </div>
          <div className="packet-bytes-pane">
            <div className="pane-title">{source?.name ?? "Bytes"}</div>
            {source ? (
              <HexView
                bytes={source.bytes}
                highlight={node ? { start: node.start, length: node.length } : null}
              />
            ) : null}
          </div>
        </div>
      ) : props.selected === null ? (
        <p className="packet-details-hint">Select a packet to see its dissection.</p>
      ) : null}
    </section>
  );
}
