// Packet details of the flow, dissected in the browser by Wireshark (Wiregasm in a worker): the
// packet list, the selected packet's tree and its bytes. Nothing is downloaded until the user
// opens a packet or asks for the list (Wiregasm is ~19 MB compressed); then only the flow's
// packets are (the API's slice), shown with the capture's frame numbers (flowPackets.ts).

import { useEffect, useState } from "react";
import type { FlowPackets } from "./flowPackets";
import { HexView } from "./HexView";
import { PacketList } from "./PacketList";
import { ProtoTreeView } from "./ProtoTreeView";
import type { FrameDetails, TreeNode } from "./protocol";
import { useDissector } from "./useDissector";
import "./wiregasm.css";

export function PacketDetails(props: {
  capturePath: string;
  flowId: number;
  /** Whether the viewer may have the packets (payloads): a share link only if it serves the file. */
  allowed: boolean;
  selected: number | null;
  onSelect: (frame: number | null) => void;
}) {
  const { dissector, state } = useDissector(props.capturePath);
  const flowPath = `${props.capturePath}/flows/${props.flowId}`;
  const [packets, setPackets] = useState<FlowPackets | null>(null);
  const [wanted, setWanted] = useState(props.selected !== null);
  const [frame, setFrame] = useState<FrameDetails | null>(null);
  const [node, setNode] = useState<TreeNode | null>(null);
  const [frameError, setFrameError] = useState<string | null>(null);

  useEffect(() => {
    if (props.selected !== null) setWanted(true);
  }, [props.selected]);

  useEffect(() => {
    if (!wanted || !dissector || !props.allowed) return;
    let cancelled = false;
    setPackets(null);
    dissector.open(flowPath).then(
      (p) => {
        if (!cancelled) setPackets(p);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [wanted, dissector, flowPath, props.allowed]);

  useEffect(() => {
    if (!packets || props.selected === null) {
      setFrame(null);
      return;
    }
    let cancelled = false;
    setFrameError(null);
    const selected = props.selected;
    packets.frame(selected).then(
      (f) => {
        if (cancelled) return;
        setFrame(f);
        setNode(null);
        if (!f)
          setFrameError(
            packets.truncated
              ? `Frame ${selected} is not among the first ${packets.frames.length.toLocaleString()} packets of this flow loaded here.`
              : `Frame ${selected} is not a packet of this flow.`,
          );
      },
      (e: Error) => {
        if (!cancelled) setFrameError(e.message);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [packets, props.selected]);

  if (!props.allowed) {
    return (
      <section className="packet-details packet-details--idle" aria-label="Packet details">
        <p>
          This share link opens the analysis only: its owner did not let it serve the packets, so
          Wireshark's dissection of them is not available here.
        </p>
      </section>
    );
  }

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
          <button
            type="button"
            onClick={() => dissector?.open(flowPath).then(setPackets, () => undefined)}
          >
            Try again
          </button>
        </p>
      </section>
    );
  }

  if (state.status !== "ready" || !packets) {
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
      {packets.truncated ? (
        <p className="packet-details-truncated" role="note" data-testid="packets-truncated">
          The first {packets.frames.length.toLocaleString()} of this flow's{" "}
          {packets.total.toLocaleString()} packets are loaded here; download the capture for all of
          them.
        </p>
      ) : null}
      <PacketList
        packets={packets}
        columns={state.summary.columns}
        selected={props.selected}
        onSelect={props.onSelect}
      />
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
