"""How far tcplens's TCP analysis agrees with Wireshark's on captures written by other projects.

``../shared/captures/corpus/real-world/`` holds ~90 captures from the test suites and trace
collections of zeek, suricata, nDPI, arkime, PcapPlusPlus and others; for each,
``../shared/captures/oracle/real-world/NAME.wireshark.json`` is TShark 4.0.17's per-frame
``tcp.analysis`` flags and ``NAME.streams.json`` its ``tcp.stream`` endpoints and per-sender median
``ack_rtt`` (issue 27). Three measures, pooled over every file:

* per event kind (:data:`tcplens.tcp.model.EVENT_NAMES`, the oracle's flag names): true / false
  positives and negatives per frame, and F1. A frame only one side analysed as TCP (e.g. TCP in a
  tunnel we do not decode) counts as having no flags on the other;
* flows: our flow count against the number of ``tcp.stream`` values, per file;
* RTT: for each Wireshark stream matched to our flow (the flow holding most of its frames) where
  both have one, whether our flow's per-direction data → ACK RTT median
  (:attr:`Flows.data_rtt_median_ns_c2s` / ``_s2c``), the larger of the two, lies within
  ``max(1 ms, 20 %)`` of Wireshark's per-sender median ``ack_rtt``, the larger of the two
  senders. Both time data by its ACK at the capture point; ours leaves out the samples that do
  not measure the network (:mod:`tcplens.tcp.rtt`), Wireshark's does not. Streams where that
  is the whole difference are listed with the reason (:data:`RTT_DIFFERS`). The path RTT
  (:attr:`Flows.rtt_median_ns`, the whole round trip whatever the capture point) is compared
  the same way for information: at a capture near one end Wireshark's larger median is only
  the far half of it.

Frames where Wireshark is wrong are left out of the F1 (:data:`WIRESHARK_WRONG`, each with its
reason, and :data:`CAPTURED_TWICE`, the copies of packets captured twice that Wireshark flags;
test_real_world_agreement.py checks that we still give our answer there).

Run ``python -m tests.tcp.real_world`` (from ``backend/``, or with it on ``PYTHONPATH``) for the
table; test_real_world_agreement.py asserts floors on it.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcplens.capture import read_capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import EVENT_NAMES, TcpAnalysis
from tests.capture.shared_captures import SHARED_CAPTURES, shared_files
from tests.tcp.real_world_copies import CAPTURED_TWICE_FRAMES

REAL_WORLD = SHARED_CAPTURES / "corpus" / "real-world"
ORACLE = SHARED_CAPTURES / "oracle" / "real-world"
RTT_ABS_NS = 1_000_000  # RTT agreement: within max(1 ms, 20 %) of Wireshark's
RTT_REL = 0.20

#: Frames where Wireshark 4.0.17's flag is wrong and ours is kept: file → frame → (kind, reason).
#: They are left out of that kind's counts.
_NO_ACK_FLAG = (
    "an nmap probe with no TCP flag at all: Wireshark's duplicate-ACK test compares the "
    "acknowledgment field without checking the ACK flag; a segment without ACK acknowledges "
    "nothing, so it is no duplicate ACK"
)
_HELD_ACK_LOST = (
    "the server's FIN sent again, with no duplicate ACK anywhere in the capture: Wireshark 4.0 "
    "holds an ack_lost_segment flag by setting the peer's dupacknum to -1, and its fast-"
    "retransmission test reads that unsigned counter as >= 2 duplicate ACKs; we call it a "
    "retransmission"
)
WIRESHARK_WRONG: dict[str, dict[int, tuple[str, str]]] = {
    "chrissanders_activeosfingerprinting.pcapng": {
        f: ("duplicate_ack", _NO_ACK_FLAG) for f in (27, 34, 41)
    },
    "zeek_tcp_reassembly.pcap": {f: ("fast_retransmission", _HELD_ACK_LOST) for f in (8, 10, 12)},
}

#: Frames that are a second copy of a packet (``capture.copies``: the same IP identification,
#: TCP header and checksum, within 50 ms) and that Wireshark flags: file → frames. Wireshark
#: has no rule for a packet captured twice: it flags the copy as a retransmission (spurious when
#: the first was acknowledged), a duplicate ACK, an out-of-order segment or a keep-alive; we
#: analyse the first copy and leave the later ones out. Every kind is left out at these frames.
CAPTURED_TWICE: dict[str, tuple[int, ...]] = CAPTURED_TWICE_FRAMES

#: Files whose flow count differs from Wireshark's ``tcp.stream`` count, and why.
FLOW_COUNT_DIFFERS: dict[str, str] = {
    "ndpi_vnc.pcap": (
        "Wireshark's VNC dissector starts a new conversation after the RFB version exchange "
        "(frames 5 and 3548): tcp.stream cuts each of the two connections in two with no SYN, "
        "FIN or RST between; one connection is one flow"
    ),
    "suricata_bug-76_input.pcap": (
        "frame 46 is a truncated TCP header (Wireshark: 'Short segment', malformed) whose "
        "garbage flags include SYN: Wireshark opens stream 8 for it; a malformed header is "
        "counted and not analysed, so it starts no flow"
    ),
    "pcapplusplus_tcp-reassembly.pcap": (
        "frame 66 is an sFlow datagram (UDP) carrying sampled headers of other connections; "
        "Wireshark dissects the samples as TCP (tcp.stream 1-7); they are not traffic of this "
        "capture's connections"
    ),
}


#: Matched streams whose RTT median differs from Wireshark's, and why: file → stream → reason.
_ACK_NOT_CAPTURED = (
    "the capture holds no segment without payload (no pure ACK): the first captured ACK of "
    "the {side}'s data is the {peer}'s next message, {late} later; a sender resends data "
    "unacknowledged for its retransmission timeout (RFC 6298 §5, about 1 s on this "
    "{rtt} path), so the receiver's ACK was sent on time and not captured. Wireshark's "
    "ack_rtt times that message ({theirs}); ours drops samples beyond the RTO ({ours})"
)
RTT_DIFFERS: dict[str, dict[int, str]] = {
    "pcapplusplus_tls2.pcap": {
        7: _ACK_NOT_CAPTURED.format(
            side="server",
            peer="client",
            late="55.8 s and 58.2 s (frames 121 → 1715, 1718 → 6903)",
            rtt="17 ms",
            theirs="median 57005 ms",
            ours="larger median 16.7 ms, the client's data acknowledged by the server",
        ),
    },
    "ndpi_bitcoin.pcap": {
        1: _ACK_NOT_CAPTURED.format(
            side="server",
            peer="client",
            late="27.4 s (frame 25 → 26; the client's 3 KB before frame 27 are not captured "
            "either)",
            rtt="53 ms",
            theirs="27440 ms",
            ours="52.7 ms",
        ),
    },
}


def captures() -> list[Path]:
    """The real-world captures that have an oracle."""
    return [
        p
        for p in shared_files(REAL_WORLD)
        if p.name != "SOURCES.md" and (ORACLE / f"{p.name}.wireshark.json").is_file()
    ]


@dataclass
class Agreement:
    """Counts pooled over files (see the module doc)."""

    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    # per file: (our flows, Wireshark's streams)
    flows: dict[str, tuple[int, int]] = field(default_factory=dict)
    # per matched stream with an RTT on both sides: (file, stream, ours_ms, theirs_ms), ours the
    # larger per-direction median; ``rtt_path`` the same with our path RTT median
    rtt: list[tuple[str, int, float, float]] = field(default_factory=list)
    rtt_path: list[tuple[str, int, float, float]] = field(default_factory=list)
    rtt_only_theirs: int = 0  # streams where Wireshark has an ack_rtt median and we no RTT
    # per file and kind, the frames that disagree: (file, kind) → (false positives, negatives)
    misses: dict[tuple[str, str], tuple[list[int], list[int]]] = field(default_factory=dict)

    def f1(self, kind: str) -> float:
        tp, fp, fn = self.tp[kind], self.fp[kind], self.fn[kind]
        return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0

    def occurrences(self, kind: str) -> int:
        """How often Wireshark reports the kind (after the excluded frames)."""
        return self.tp[kind] + self.fn[kind]

    def rtt_agreeing(self) -> int:
        return sum(1 for *_, ours, theirs in self.rtt if rtt_agrees(ours, theirs))

    def rtt_documented(self) -> int:
        """Matched streams whose RTT disagreement is documented (:data:`RTT_DIFFERS`)."""
        return sum(1 for name, stream, *_ in self.rtt if stream in RTT_DIFFERS.get(name, {}))

    def rtt_undocumented(self) -> list[tuple[str, int, float, float]]:
        """Matched streams whose RTT disagrees with no documented reason."""
        return [
            (name, stream, ours, theirs)
            for name, stream, ours, theirs in self.rtt
            if not rtt_agrees(ours, theirs) and stream not in RTT_DIFFERS.get(name, {})
        ]

    def flow_files_equal(self) -> int:
        return sum(1 for ours, theirs in self.flows.values() if ours == theirs)

    def flow_files_differing(self) -> dict[str, tuple[int, int]]:
        """Files whose flow count is not Wireshark's stream count: (ours, Wireshark's)."""
        return {name: n for name, n in self.flows.items() if n[0] != n[1]}

    def table(self) -> str:
        lines = [f"{'kind':24s} {'wireshark':>9s} {'tp':>6s} {'fp':>6s} {'fn':>6s} {'F1':>6s}"]
        for kind in EVENT_NAMES:
            lines.append(
                f"{kind:24s} {self.occurrences(kind):9d} {self.tp[kind]:6d} {self.fp[kind]:6d} "
                f"{self.fn[kind]:6d} {self.f1(kind):6.3f}"
            )
        ours = sum(o for o, _ in self.flows.values())
        theirs = sum(t for _, t in self.flows.values())
        lines.append(
            f"flows: {ours} ours, {theirs} tcp.stream; equal count in "
            f"{self.flow_files_equal()}/{len(self.flows)} files"
        )
        n = len(self.rtt)
        agree = self.rtt_agreeing()
        documented = self.rtt_documented()
        lines.append(
            f"rtt (larger direction's median): {agree}/{n} flows within max(1 ms, 20 %) "
            f"({_share(agree, n)}); without the {documented} documented disagreements "
            f"{agree}/{n - documented} ({_share(agree, n - documented)}); "
            f"{self.rtt_only_theirs} streams with a Wireshark ack_rtt and no RTT of ours"
        )
        path = sum(1 for *_, ours, theirs in self.rtt_path if rtt_agrees(ours, theirs))
        lines.append(
            f"path rtt (information): {path}/{len(self.rtt_path)} ({_share(path, len(self.rtt_path))})"
        )
        return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part / whole if whole else 1.0:.3f}"


def rtt_agrees(ours_ms: float, theirs_ms: float) -> bool:
    return abs(ours_ms - theirs_ms) <= max(RTT_ABS_NS / 1e6, RTT_REL * theirs_ms)


def oracle(path: Path) -> tuple[dict[int, dict[str, object]], dict[int, dict[str, object]]]:
    """Wireshark's per-frame facts and its streams, by frame number and stream number."""
    frames = json.loads((ORACLE / f"{path.name}.wireshark.json").read_text())["tcp_frames"]
    streams = json.loads((ORACLE / f"{path.name}.streams.json").read_text())["streams"]
    return {int(k): v for k, v in frames.items()}, {int(k): v for k, v in streams.items()}


def analyse(path: Path) -> TcpAnalysis:
    return analyze_tcp(read_capture(path).packets)


def compare(path: Path, result: TcpAnalysis, into: Agreement) -> None:
    """Add one capture's comparison to ``into``."""
    frames, streams = oracle(path)
    seg = result.segments
    mine = dict(zip(seg.frame.tolist(), seg.events.tolist(), strict=True))
    wrong = WIRESHARK_WRONG.get(path.name, {})
    copies = set(CAPTURED_TWICE.get(path.name, ()))
    for frame in sorted((set(mine) | set(frames)) - copies):
        theirs = set(frames.get(frame, {}).get("flags", []))  # type: ignore[call-overload]
        bits = mine.get(frame, 0)
        for i, kind in enumerate(EVENT_NAMES):
            if frame in wrong and wrong[frame][0] == kind:
                continue
            ours = bool(bits >> i & 1)
            if ours == (kind in theirs):
                into.tp[kind] += ours
                continue
            fps, fns = into.misses.setdefault((path.name, kind), ([], []))
            (fps if ours else fns).append(frame)
            into.fp[kind] += ours
            into.fn[kind] += not ours
    # the streams of TCP frames (streams.json also has the streams of TCP headers quoted in ICMP
    # errors, which are no connection and which the per-frame oracle leaves out)
    into.flows[path.name] = (
        len(result.flows),
        len({int(facts["stream"]) for facts in frames.values()}),  # type: ignore[call-overload]
    )
    # each Wireshark stream → our flow holding most of its frames
    flow_of = dict(zip(seg.frame.tolist(), seg.flow_column().tolist(), strict=True))
    votes: dict[int, Counter[int]] = {}
    for frame, facts in frames.items():
        if frame in flow_of:
            votes.setdefault(int(facts["stream"]), Counter())[flow_of[frame]] += 1  # type: ignore[call-overload]
    flows = result.flows
    median = np.maximum(flows.data_rtt_median_ns_c2s, flows.data_rtt_median_ns_s2c)
    for stream, facts in streams.items():
        by_sender = facts.get("ack_rtt_ms_median_by_sender") or {}
        theirs = max(by_sender.values(), default=None)  # type: ignore[attr-defined]
        if theirs is None:
            continue
        flow = votes[stream].most_common(1)[0][0] if stream in votes else -1
        if flow < 0 or median[flow] < 0:
            into.rtt_only_theirs += 1
            continue
        into.rtt.append((path.name, stream, float(median[flow]) / 1e6, float(theirs)))
        if flows.rtt_median_ns[flow] >= 0:
            ours_path = float(flows.rtt_median_ns[flow]) / 1e6
            into.rtt_path.append((path.name, stream, ours_path, float(theirs)))


def measure(files: list[Path] | None = None) -> Agreement:
    agreement = Agreement()
    for path in captures() if files is None else files:
        compare(path, analyse(path), agreement)
    return agreement


def main(argv: list[str]) -> int:
    """Print the table; ``-v`` adds the disagreeing frames per file and kind, and the flows
    whose RTT disagrees."""
    if not ORACLE.is_dir():
        print(f"no oracle at {ORACLE}", file=sys.stderr)
        return 1
    agreement = measure()
    print(agreement.table())
    if "-v" in argv:
        for (name, kind), (fps, fns) in sorted(agreement.misses.items()):
            print(f"{name} {kind}: fp {fps[:20]}{'…' if len(fps) > 20 else ''} "
                  f"fn {fns[:20]}{'…' if len(fns) > 20 else ''}")  # fmt: skip
        for name, (ours, theirs) in sorted(agreement.flows.items()):
            if ours != theirs:
                print(f"{name}: {ours} flows, {theirs} streams")
        for name, stream, ours_ms, theirs_ms in agreement.rtt_undocumented():
            print(f"{name} stream {stream}: rtt {ours_ms:.3f} ms, wireshark {theirs_ms:.3f} ms")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main(sys.argv[1:]))
