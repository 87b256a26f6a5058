"""Request and response bodies of the API: the OpenAPI schema the frontend client is generated
from. Field names are part of the contract; add fields, do not rename them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tcplens.services.access import SCOPES, Scope
from tcplens.services.sharing import DEFAULT_EXPIRY as DEFAULT_SHARE_EXPIRY

CaptureStatus = Literal["queued", "running", "done", "failed"]


class FieldProblem(BaseModel):
    location: list[str | int] = Field(description="where in the request, e.g. ['query', 'limit']")
    message: str


class Problem(BaseModel):
    """Every error answer (RFC 9457 ``application/problem+json``). ``code`` is stable: clients
    branch on it, never on ``title`` or ``detail``. Some problems carry more members (``errors``
    for a request that failed validation, ``field``, ``limit_bytes``, ``retry_after_s``…)."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int = Field(ge=400, le=599)
    detail: str
    code: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    instance: str
    errors: list[FieldProblem] | None = None


class UserOut(BaseModel):
    id: uuid.UUID
    email: str


class WorkspaceOut(BaseModel):
    id: uuid.UUID
    name: str
    role: Literal["owner", "member"]


class SessionOut(BaseModel):
    """Who is signed in. ``csrf_token`` goes in the ``X-CSRF-Token`` header of every unsafe
    request made with the session cookie (it is also readable from the ``tcplens_csrf`` cookie)."""

    user: UserOut
    workspaces: list[WorkspaceOut]
    csrf_token: str | None = None


class SignUpAccepted(BaseModel):
    """The answer to a sign-up, the same whether or not the address already had an account (so
    it tells nobody which addresses do); it starts no session: sign in next."""

    detail: str


class Credentials(BaseModel):
    email: str = Field(max_length=320)
    password: str = Field(max_length=1024)


class PasswordChange(BaseModel):
    current_password: str = Field(max_length=1024)
    new_password: str = Field(
        max_length=1024,
        description="12 to 1024 characters, not guessable (checked against lists of breached "
        "passwords, words and names); no rules on which characters",
    )


class MemberOut(BaseModel):
    user_id: uuid.UUID | None = Field(description="null while invited")
    email: str
    role: Literal["owner", "member"]
    status: Literal["member", "invited"] = Field(
        description="invited: not joined yet (the invitation takes effect when an account with "
        "this address next signs in or uses its session; the answer is the same whether or not "
        "one exists)"
    )


class WorkspaceUsage(BaseModel):
    """What a workspace stores (its captures' original files) against its quota."""

    used_bytes: int
    quota_bytes: int
    captures: int


class WorkspaceCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class MemberInvite(BaseModel):
    email: str = Field(max_length=320)


class TokenCreate(BaseModel):
    name: str = Field(default="token", max_length=200)
    workspace_id: uuid.UUID | None = None
    scopes: list[Scope] | None = Field(
        default=None,
        max_length=len(SCOPES),
        description="What the token may do: `captures:read` (read captures and results), "
        "`captures:write` (upload, delete, share), `admin` (API tokens and members). "
        "Default: captures:read and captures:write. A token cannot grant a scope it lacks.",
    )


class TokenOut(BaseModel):
    id: uuid.UUID
    name: str
    workspace_id: uuid.UUID
    display_prefix: str
    scopes: list[Scope]
    created_at: datetime
    last_used_at: datetime | None = Field(
        description="When it last authenticated a request (to the minute)"
    )
    revoked_at: datetime | None


class TokenIssued(TokenOut):
    token: str = Field(description="The token itself. Shown only in this response.")


class Progress(BaseModel):
    stage: str | None = Field(
        description="reading | analysing | diagnosing | storing, while running"
    )
    bytes_done: int = Field(
        description="Bytes of the file read so far (moves during `reading`, then the total)"
    )
    bytes_total: int


class CaptureError(BaseModel):
    code: str
    message: str


class TopFinding(BaseModel):
    """A capture's most important finding, in short (the list of captures shows it)."""

    code: str
    severity: str
    factor: str | None
    title: str
    time_lost_s: float | None


class CaptureOut(BaseModel):
    id: uuid.UUID
    workspace_id: uuid.UUID
    filename: str
    sha256: str
    size_bytes: int
    format: str = Field(description="pcap | pcapng | unknown (inside a compressed file)")
    compression: str | None
    status: CaptureStatus
    progress: Progress
    error: CaptureError | None
    facts: dict[str, Any] | None = Field(
        description="When done: the `capture` object of DESIGN.md's analyze JSON, plus counts"
    )
    analyzer_version: str | None
    top_finding: TopFinding | None = Field(
        default=None,
        description="When done and something was found: the most important finding "
        "(in the list of captures and GET of one capture)",
    )
    timings_s: dict[str, float] | None = Field(
        description="When done: seconds per step of the analysis (queued, fetch, child_startup, "
        "reading, analysing, diagnosing, writing_series, handover, load_result, store_series, "
        "store_rows), for operators and benchmarks"
    )
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    download_allowed: bool = Field(
        description="Whether this caller may download the original file (`/file`): false "
        "through a share link that opens the analysis only",
    )


class JobOut(BaseModel):
    id: int | None
    status: str | None = Field(description="the queue's view: todo | doing | succeeded | failed")


class UploadAccepted(BaseModel):
    capture: CaptureOut
    job: JobOut
    created: bool = Field(
        description="false: the same bytes were already in this workspace (answered 200, or 202 "
        "when their analysis had failed and runs again)"
    )


class CapturePageOut(BaseModel):
    items: list[CaptureOut]
    total: int = Field(description="captures matching the search, on every page")
    offset: int
    limit: int


class CaptureIdsIn(BaseModel):
    # At most one page of the list (services.captures.PAGE_SIZE_MAX).
    ids: list[uuid.UUID] = Field(min_length=1, max_length=200)


class ByteCounts(BaseModel):
    client_to_server: int
    server_to_client: int


class RttSummary(BaseModel):
    min: float
    median: float
    p95: float


class DirectionRtt(BaseModel):
    min: float
    median: float


class DirectionRtts(BaseModel):
    """Each direction's data → ACK round trip as seen at the capture point (from there to the
    data's receiver and back: what Wireshark's ``tcp.analysis.ack_rtt`` times), from samples
    that measure the network (Karn's rule, none longer than the retransmission timeout);
    null without a sample."""

    client_to_server: DirectionRtt | None
    server_to_client: DirectionRtt | None


class WindowScale(BaseModel):
    """Each side's window scale shift (RFC 7323); null when its handshake was not captured."""

    client: int | None
    server: int | None


class FlowTimeline(BaseModel):
    """Capture-relative seconds of a flow's milestones (null: that packet was not captured)."""

    syn_s: float | None
    handshake_done_s: float | None
    first_data_s: float | None
    last_data_s: float | None
    idle_gaps_s: list[list[float]] = Field(description="[start, end] of each idle gap")


class FlowSummary(BaseModel):
    """DESIGN.md's flow object, as ``tcplens analyze --json`` prints it."""

    id: int
    client: str = Field(description="ip:port of the side that sent the SYN (else the first sender)")
    server: str
    start_s: float = Field(description="Seconds from the capture's first packet")
    duration_s: float
    bytes: ByteCounts = Field(description="TCP payload, unique bytes, per direction")
    packets: int
    handshake_rtt_ms: float | None
    rtt_ms: RttSummary | None = Field(description="The path's round trip, when measured")
    retransmissions: int
    limiting_factor: str | None = Field(description="A FACTOR (DESIGN.md): what held it back most")
    factor_shares: dict[str, float] = Field(
        description="Share of the flow's active time per FACTOR (sums to at most 1)"
    )
    # Added after the first results were stored: absent (null) on older analyses.
    vantage: str | None = Field(default=None, description="Where the capture point sits")
    window_scale: WindowScale | None = None
    timeline: FlowTimeline | None = None
    encapsulation: str | None = Field(
        default=None,
        description="The tunnels its packets came through, outermost kinds first, joined by "
        "'+' (VLAN, MPLS, PPPoE, GRE, ERSPAN, 802.11, IPIP, 6in4, 4in6, 6in6, VXLAN, Geneve, "
        "GTP-U); null for none",
    )
    rtt_by_direction_ms: DirectionRtts | None = Field(
        default=None, description="Each direction's data → ACK round trip from the capture point"
    )


class FlowOut(BaseModel):
    """One flow: DESIGN.md's flow object (``summary``) plus the metrics the table sorts on."""

    id: int
    client: str
    server: str
    start_s: float
    duration_s: float
    bytes_total: int
    packets: int
    throughput_bps: float
    retransmissions: int
    time_lost_s: float
    limiting_factor: str | None
    summary: FlowSummary


class FlowPageOut(BaseModel):
    items: list[FlowOut]
    total: int


class IfFixed(BaseModel):
    """What the finding's fix buys: the transfer's predicted duration and rate with the fix
    applied, from a model of the same transfer on the same path, and the basis in words."""

    duration_s: float
    rate_bps: float
    basis: str


class Confidence(BaseModel):
    """What the capture could not see of the flows a finding names: the inputs that say how far
    to trust it."""

    capture_point: str | list[str] = Field(
        description="where the capture sat (near_client, near_server, middle, unknown), or each "
        "of the flows' when they differ"
    )
    handshake_captured: bool = Field(
        description="every flow's handshake was captured (else its window scale and handshake "
        "RTT are not in the capture)"
    )
    inferred: list[str] = Field(
        description="values inferred from the data instead of read, e.g. window_scale"
    )
    packets_missing: int = Field(
        description="segments the capture missed (Wireshark's lost_segment)"
    )
    timestamps_backwards: int = Field(
        description="packets timed before the one before them in their direction"
    )
    capture_truncated: bool = Field(description="the file ends inside a packet record")
    snaplen: int | None = Field(
        default=None,
        description="bytes kept of each packet when the capture's snaplen cut these flows' "
        "packets (their sizes come from the headers; the payload is not in the file); null "
        "when nothing was cut",
    )
    packets_cut: int = Field(default=0, description="these flows' packets the snaplen cut")
    clock_jumps: int = Field(
        default=0,
        description="clock steps (packet times that jump, see the capture's warnings) inside "
        "these flows: no time across one counts as a round trip, a duration or an idle gap",
    )


class Evidence(BaseModel):
    """Where to look (``time_ranges_s``, ``frames``), the finding's own numbers and its
    confidence inputs."""

    model_config = ConfigDict(extra="allow")

    confidence: Confidence | None = Field(
        default=None, description="What the capture could not see (null: older analyses)"
    )


class FindingOut(BaseModel):
    """DESIGN.md's finding object, most important first."""

    rank: int
    code: str
    severity: str
    factor: str | None
    time_lost_s: float | None
    title: str
    summary: str
    fix: str
    flows: list[int]
    evidence: Evidence
    if_fixed: IfFixed | None = Field(
        default=None, description="What the fix buys (null: no concrete fix, or older analyses)"
    )


class ComparedCapture(BaseModel):
    capture: str = Field(description="the capture's file name")
    duration_s: float
    id: uuid.UUID


class ComparedFinding(BaseModel):
    """One side of a compared finding."""

    severity: str
    title: str
    time_lost_s: float | None
    flows: list[int]
    if_fixed: IfFixed | None


class FindingChange(BaseModel):
    """A finding matched by cause (``code``) and the server it concerns."""

    code: str
    server: str
    status: Literal["resolved", "remaining", "new"]
    before: ComparedFinding | None
    after: ComparedFinding | None


class Prediction(BaseModel):
    """A BEFORE finding's ``if_fixed`` for this transfer, next to what AFTER measured."""

    code: str
    duration_s: float
    rate_bps: float
    basis: str
    vs_after: float | None = Field(description="predicted / AFTER's measured duration")


class ComparedTransfer(BaseModel):
    """All flows to one server with payload, in each capture (matched by server and size)."""

    server: str
    bytes: int = Field(description="payload bytes BEFORE (both directions)")
    after_bytes: int
    before_s: float = Field(description="first SYN (or DNS query) to last payload, BEFORE")
    after_s: float
    before_rate_bps: float
    after_rate_bps: float
    speedup: float = Field(description="before_s / after_s (below 1: slower)")
    before_flows: list[int]
    after_flows: list[int]
    before_connections: int
    after_connections: int
    before_start_s: float
    after_start_s: float
    predictions: list[Prediction]


class UnmatchedServers(BaseModel):
    before: list[str]
    after: list[str]


class ComparisonOut(BaseModel):
    """DESIGN.md's ``tcplens compare --json`` object."""

    before: ComparedCapture
    after: ComparedCapture
    resolved: list[str]
    remaining: list[str]
    new: list[str]
    transfers: list[ComparedTransfer]
    speedup: float = Field(description="matched transfers' total duration before / after")
    findings: list[FindingChange]
    unmatched_servers: UnmatchedServers
    summary: str


class SeriesOut(BaseModel):
    """One direction of one flow. ``columns`` maps a column name to its values, row-aligned;
    ``events`` is a bit mask over ``event_kinds``."""

    flow: int
    direction: Literal["client_to_server", "server_to_client"]
    points_in_range: int
    returned_points: int
    reduced: bool
    event_kinds: list[str]
    columns: dict[str, list[Any]]


class FlowFramesOut(BaseModel):
    """The capture's frame numbers of one flow's packets, ascending: the first ``max_frames``
    of its ``total``. Frame ``k`` of the flow's packet slice (``…/flows/{id}/packets``) is
    ``frames[k - 1]``."""

    frames: list[int]
    total: int
    max_frames: int
    start_s: float | None = Field(
        description="Seconds from the capture's start (the graphs' origin) to the flow's first "
        "frame: Wireshark's times in the slice count from that frame"
    )


class ShareCreate(BaseModel):
    expires_in_s: int | None = Field(
        default=int(DEFAULT_SHARE_EXPIRY.total_seconds()),
        description="Seconds until the link expires, 60 s to 10 years (default: 7 days); "
        "null: never, until revoked",
    )
    allow_download: bool = Field(
        default=False,
        description="Whether the link also serves the original capture file (packets with "
        "their payloads); by default it opens the analysis only",
    )


class ShareLinkOut(BaseModel):
    id: uuid.UUID
    capture_id: uuid.UUID
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    allow_download: bool = Field(description="The link serves the original file too")
    created_by: str | None = Field(
        description="E-mail address of the member who made it (null: the account is gone)"
    )


class WorkspaceShareLinkOut(ShareLinkOut):
    """A link in the workspace's list, which its owners review."""

    filename: str = Field(description="The shared capture's file name")


class ShareLinkIssued(ShareLinkOut):
    token: str = Field(description="Shown only in this response")
    url: str = Field(description="The page to send to someone")
