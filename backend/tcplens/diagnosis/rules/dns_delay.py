"""dns-delay: the client waited for DNS before it could connect.

What it detects
    DNS queries from a connection's client host answered before the connection's SYN (within
    30 s) that concern it: the answer holds the server's address, the query is a reverse (PTR)
    lookup of the server's address, or it ends right before the SYN (less than a second) as part
    of the same chain of lookups. The time counted is the union of their query→answer spans, so
    lookups made one after the other add up and parallel ones do not. A reverse lookup of an IP
    literal is called out: the client had the address and looked up a name only to log it or to
    check it.

Why it matters
    Nothing moves until the answer arrives; a resolver that times out costs seconds (glibc waits
    5 s before retrying), and reverse lookups of private addresses often go unanswered.

What to do
    Skip the lookup (connect to the literal, disable reverse lookups: sshd ``UseDNS no``, Apache
    ``HostnameLookups Off``, the library's "resolve peer name" option), cache answers, or fix the
    resolver that is slow.

Thresholds
    Reported when the wait is at least 100 ms — a normal lookup takes 1-50 ms.
"""

from __future__ import annotations

import ipaddress

import numpy as np

from tcplens.capture.table import address_text, endpoint_text
from tcplens.diagnosis import wording as w
from tcplens.diagnosis.context import Context
from tcplens.diagnosis.finding import Evidence, Factor, Finding
from tcplens.diagnosis.transfer import DnsExchange

CODE = "dns-delay"
FACTOR: Factor = "dns"
MIN_WAIT_S = 0.1
LOOKBACK_S = 30.0
CHAIN_GAP_S = 1.0
MAX_CONNECTIONS = 1000
PTR = 12
RCODE_NAMES = {2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED"}


def reverse_name_address(qname: str) -> str | None:
    """The address a PTR name asks about: ``2.0.77.10.in-addr.arpa`` → ``10.77.0.2``."""
    name = qname.lower().rstrip(".")
    try:
        if name.endswith(".in-addr.arpa"):
            return str(ipaddress.IPv4Address(".".join(reversed(name[:-13].split(".")))))
        if name.endswith(".ip6.arpa"):
            nibbles = "".join(reversed(name[:-9].split(".")))
            return str(ipaddress.IPv6Address(int(nibbles, 16)))
    except (ValueError, ipaddress.AddressValueError):
        return None
    return None


def _union(spans: list[tuple[float, float]]) -> float:
    arr = np.array(sorted(spans), np.float64).reshape(-1, 2)
    if arr.size == 0:
        return 0.0
    ends = np.maximum.accumulate(arr[:, 1])
    starts = np.maximum(arr[:, 0], np.concatenate(([-np.inf], ends[:-1])))
    return float(np.clip(ends - starts, 0.0, None).sum())


def detect(ctx: Context) -> list[Finding]:
    if not ctx.dns:
        return []
    findings: list[Finding] = []
    used: set[int] = set()
    fx = ctx.facts
    qt = np.array([d.query_t for d in ctx.dns], np.float64)
    # Connections with a query in the 30 s before their SYN; DNS messages are few, so the walk
    # below touches only those (at most MAX_CONNECTIONS of them, in time order).
    syn = fx.syn_s
    has_syn = ~np.isnan(syn)
    lo_all = np.searchsorted(qt, np.where(has_syn, syn - LOOKBACK_S, np.inf), side="left")
    hi_all = np.searchsorted(qt, np.where(has_syn, syn, -np.inf), side="left")
    candidates = np.flatnonzero(has_syn & (hi_all > lo_all))
    candidates = candidates[np.argsort(syn[candidates], kind="stable")][:MAX_CONNECTIONS]
    for row in candidates.tolist():
        lo, hi = int(lo_all[row]), int(hi_all[row])
        syn_s = float(syn[row])
        client_host = address_text(fx.client_addr[row])
        server_ep = endpoint_text(fx.server_addr[row], int(fx.server_port[row]))
        server = server_ep.rsplit(":", 1)[0].strip("[]")
        related: list[tuple[DnsExchange, float]] = []
        for i in range(hi - 1, lo - 1, -1):  # newest first, to follow the chain back
            d = ctx.dns[i]
            if i in used or d.client != client_host:
                continue
            end = d.answer_t if d.answer_t is not None else syn_s
            if end > syn_s + 1e-6:
                continue
            asked_for = reverse_name_address(d.qname)
            about = server in d.answers or asked_for == server
            if not about and (d.answers or asked_for is not None):
                continue  # a lookup that answered (or asked) for another host: not this one's
            # Part of a serial chain: the next step (a related lookup, or the SYN) started after
            # this answer, within a second. Lookups running in parallel (a browser resolving a
            # page's hosts) overlap the chain instead and are left out.
            chained = syn_s - end < CHAIN_GAP_S or any(
                -0.001 <= d2.query_t - end < CHAIN_GAP_S for d2, _ in related
            )
            if about or chained:
                related.append((d, end))
        if not related:
            continue
        wait = _union([(d.query_t, end) for d, end in related])
        if wait < MIN_WAIT_S:
            continue
        used.update(ctx.dns.index(d) for d, _ in related)
        related.sort(key=lambda x: x[0].query_t)
        parts = []
        reverse = []
        for d, end in related:
            target = reverse_name_address(d.qname) if d.qtype == PTR else None
            took = w.duration(end - d.query_t)
            if target is not None:
                reverse.append(target)
                parts.append(f"a reverse (PTR) lookup of the IP literal {target} took {took}")
            elif d.answer_t is None:
                parts.append(f"a lookup of {d.qname} got no answer in {took}")
            else:
                parts.append(f"a lookup of {d.qname} took {took}")
            if d.rcode in RCODE_NAMES:
                parts[-1] += f" and failed ({RCODE_NAMES[d.rcode]})"
        flow = int(fx.id[row])
        summary = (
            f"Before connecting to {server_ep}, {client_host} waited "
            f"{w.duration(wait)} for DNS: " + "; ".join(parts) + "."
        )
        if reverse:
            summary += (
                f" The client already had the address {reverse[0]}: the reverse lookup only "
                "fetched a name for it."
            )
            fix = (
                "Skip the reverse lookup of the peer's address (e.g. sshd `UseDNS no`, Apache "
                "`HostnameLookups Off`, or the library's option to not resolve peer names), and "
                "connect to the address directly or cache the forward lookup."
            )
        else:
            fix = (
                "Cache the answer (a local caching resolver such as systemd-resolved or dnsmasq, "
                "or the application's own cache), resolve ahead of time, or fix the slow resolver."
            )
        frames = sorted(
            {d.query_frame for d, _ in related}
            | {d.answer_frame for d, _ in related if d.answer_frame is not None}
            | {int(fx.first_frame[row])}
        )
        findings.append(
            Finding(
                code=CODE,
                factor=FACTOR,
                severity=ctx.severity(FACTOR, wait, flows=(flow,), extra_s=wait),
                title=f"DNS delay: {w.duration(wait)} before connecting to {server_ep}",
                summary=summary,
                fix=fix,
                time_lost_s=wait,
                flows=(flow,),
                evidence=Evidence(
                    tuple((d.query_t, end) for d, end in related),
                    tuple(frames),
                    {"queries": [d.qname for d, _ in related]},
                ),
            )
        )
    return findings
