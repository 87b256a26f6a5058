"""The analysis job: run the core on an uploaded capture and store its results.

Idempotent: results are keyed by (capture, analyzer version). A job that finds its capture done
by the same analyzer version returns at once; one that runs again (a retried stalled job, or a
new analyzer version) replaces the rows in one transaction, so readers never see half a result.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import multiprocessing
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import delete, insert, text
from sqlalchemy.orm import Session

import tcplens
from tcplens.db.captures import Capture, Finding, Flow
from tcplens.services.context import ServiceContext
from tcplens.services.flow_rows import COPY_FLOWS
from tcplens.storage.blobs import BlobNotFoundError

logger = logging.getLogger(__name__)

ANALYZER_VERSION = tcplens.__version__
COPY_BLOCK = 1 << 20
# The capture's progress row is written at most this often while the child reads.
PROGRESS_INTERVAL_S = 0.5
# The child's last message: its result files are complete.
FINISHED = "finished"
# What each stage the child reports is called in the capture's timings.
_TIMING_OF_STAGE = {
    "reading": "reading",
    "analysing": "analysing",
    "diagnosing": "diagnosing",
    "storing": "writing_series",
}

# forkserver: each analysis forks from a small clean server process that has imported the core
# once (fast start, no inherited threads or sockets from the worker).
_MP = multiprocessing.get_context("forkserver")
# The preload sets the fork server up (tcplens.runtime.fork_server) and loads every kernel once
# there, so every forked analysis starts with them.
_MP.set_forkserver_preload(["tcplens.services.analysis_warmup"])


def start_fork_server() -> None:
    """Start the analysis fork server now (importing the core and warming its kernels takes
    1-3 s) instead of when the first job arrives: a no-op child forces it up."""
    child = _MP.Process(target=int, name="tcplens-analysis-fork-server-start")
    child.start()
    child.join()


# Runs of one capture's analysis whose child was killed by a signal before it is failed for good
# (the first run and two retries): a kill by an operator or the OOM killer can be a passing event.
MAX_KILLED_ATTEMPTS = 3


class AnalysisFailed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class AnalysisKilled(AnalysisFailed):
    """The child died from a signal (SIGKILL from an operator or the kernel's OOM killer,
    SIGSEGV from a crash): worth another try, up to MAX_KILLED_ATTEMPTS runs."""


class AnalysisInterrupted(Exception):
    """The worker is stopping and stopped the analysis: the job goes back to the queue (the
    task's retry strategy) and runs again when a worker takes it."""


class _Children:
    """The analysis children this process has running, so that a stopping worker can stop them
    (its job would otherwise hold the worker's shutdown for up to the analysis time limit)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[multiprocessing.process.BaseProcess] = set()
        self.stopping = False

    @contextlib.contextmanager
    def running(self, child: multiprocessing.process.BaseProcess) -> Iterator[None]:
        with self._lock:
            self._running.add(child)
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(child)

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        """Kill the running children, and any started until the block ends."""
        with self._lock:
            self.stopping = True
            for child in self._running:
                # (one still being started, waiting for the fork server, has no pid yet: it
                # is killed when its start returns, below in _run_child)
                if child.pid is not None:
                    with contextlib.suppress(OSError, ValueError):
                        child.kill()
        try:
            yield
        finally:
            with self._lock:
                self.stopping = False


_children = _Children()


def analyses_stopped() -> contextlib.AbstractContextManager[None]:
    """While a worker stops: every analysis this process runs is killed (and none starts), and
    its job goes back to the queue (the task's retries) for the next worker."""
    return _children.stopped()


def analyze(ctx: ServiceContext, capture_id: uuid.UUID) -> None:
    started = _start(ctx, capture_id)
    if started is None:
        return
    blob_key, size_bytes, queued_s, attempt = started
    job = _Job(ctx, capture_id, size_bytes)
    job.timings["queued"] = queued_s
    try:
        # Scratch space inside the data directory: for the local store, moving the series file
        # into place is then a rename on the same file system, not a copy.
        scratch_root = ctx.settings.data_path / "scratch"
        scratch_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="analysis-", dir=scratch_root) as scratch:
            scratch_dir = Path(scratch)
            with ctx.store.local_copy(blob_key, scratch_dir / "input") as path:
                job.lap("fetch")
                result = _run_child(job, path, scratch_dir / "out", results_key_of(capture_id))
            job.progress("storing", size_bytes, now=True)
            _store(ctx, capture_id, result, scratch_dir / "out", job)
    except AnalysisInterrupted:
        _requeue(ctx, capture_id, None)
        raise
    except AnalysisKilled as killed:
        if attempt < MAX_KILLED_ATTEMPTS:
            logger.warning("analysis of capture %s: %s; it runs again", capture_id, killed.message)
            _requeue(ctx, capture_id, killed.message)
            raise  # the task's retry strategy runs it again
        _fail(ctx, capture_id, killed.code, f"{killed.message} (on each of {attempt} attempts)")
    except AnalysisFailed as failure:
        _fail(ctx, capture_id, failure.code, failure.message)
    except BlobNotFoundError:
        _fail(ctx, capture_id, "capture_file_gone", "the capture's file is gone from the store")
    except Exception:
        logger.exception("analysis of capture %s failed", capture_id)
        _fail(ctx, capture_id, "internal_error", "the analysis failed unexpectedly")


def fail_captures_of_dead_jobs(ctx: ServiceContext) -> int:
    """Captures still queued or running whose job has ended for good (failed after its retries,
    or cancelled/aborted by an operator) would wait forever: say so on the capture."""
    with ctx.engine.begin() as connection:
        result = connection.execute(
            text(
                """
                UPDATE captures AS c
                   SET status = 'failed', stage = NULL, finished_at = now(),
                       error_code = 'analysis_job_failed',
                       error_message = 'the analysis job failed repeatedly; upload the capture '
                                       || 'again or ask the operator to look at the worker logs'
                  FROM procrastinate_jobs AS j
                 WHERE j.id = c.job_id
                   AND c.status IN ('queued', 'running')
                   AND j.status IN ('failed', 'cancelled', 'aborted')
                """
            )
        )
    return int(result.rowcount)


def sweep_scratch(ctx: ServiceContext) -> None:
    """Remove scratch directories left by workers that were killed mid-analysis: older than
    twice the analysis time limit, so no running analysis can still be using them."""
    root = ctx.settings.data_path / "scratch"
    if not root.is_dir():
        return
    cutoff = time.time() - 2 * ctx.settings.analysis_timeout_s
    for entry in root.iterdir():
        with contextlib.suppress(OSError):
            if entry.is_dir() and entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry, ignore_errors=True)


def _start(ctx: ServiceContext, capture_id: uuid.UUID) -> tuple[str, int, float, int] | None:
    """Mark the capture running: its blob key, size, how long it waited in the queue and which
    attempt this is."""
    with ctx.sessionmaker() as session:
        capture = session.get(Capture, capture_id, with_for_update=True)
        if capture is None:
            return None  # deleted while queued
        if capture.status == "done" and capture.analyzer_version == ANALYZER_VERSION:
            return None
        now = datetime.now(UTC)
        capture.status = "running"
        capture.stage = "reading"
        capture.progress_bytes = 0
        capture.attempts += 1
        capture.error_code = capture.error_message = None
        capture.started_at = now
        capture.timings = None
        session.commit()
        waited = (now - capture.created_at).total_seconds()
        return capture.blob_key, capture.size_bytes, waited, capture.attempts


def _requeue(ctx: ServiceContext, capture_id: uuid.UUID, message: str | None) -> None:
    """Back to queued, its job about to be retried; ``message`` says why the last run ended."""
    with ctx.sessionmaker() as session:
        capture = session.get(Capture, capture_id)
        if capture is not None:
            capture.status = "queued"
            capture.stage = None
            capture.progress_bytes = 0
            capture.error_code = None
            capture.error_message = message
            session.commit()


def _progress(ctx: ServiceContext, capture_id: uuid.UUID, stage: str, done: int) -> None:
    with ctx.sessionmaker() as session:
        capture = session.get(Capture, capture_id)
        if capture is not None:
            capture.stage = stage
            capture.progress_bytes = done
            session.commit()


def _fail(ctx: ServiceContext, capture_id: uuid.UUID, code: str, message: str) -> None:
    with ctx.sessionmaker() as session:
        capture = session.get(Capture, capture_id)
        if capture is not None:
            capture.status = "failed"
            capture.stage = None
            capture.error_code = code
            capture.error_message = message
            capture.finished_at = datetime.now(UTC)
            session.commit()


class _Job:
    """One running analysis as the worker follows it: the capture's progress row, written at most
    every PROGRESS_INTERVAL_S (the child reports up to ~100 byte steps), and where the time went."""

    def __init__(self, ctx: ServiceContext, capture_id: uuid.UUID, size_bytes: int) -> None:
        self.ctx, self.capture_id, self.size_bytes = ctx, capture_id, size_bytes
        self.timings: dict[str, float] = {}
        self._mark = time.time()
        self._pending: tuple[str, int] | None = None
        self._written: tuple[str, int] = ("reading", 0)  # as ``_start`` left the row
        self._written_at = -math.inf

    def lap(self, step: str, now: float | None = None) -> None:
        """The time since the previous lap is the time of ``step``."""
        now = time.time() if now is None else now
        self.timings[step] = self.timings.get(step, 0.0) + max(0.0, now - self._mark)
        self._mark = now

    def progress(self, stage: str, done: int, *, now: bool = False) -> None:
        self._pending = None if (stage, done) == self._written else (stage, done)
        if now or time.monotonic() - self._written_at >= PROGRESS_INTERVAL_S:
            self.flush()

    def flush(self) -> None:
        if self._pending is not None:
            _progress(self.ctx, self.capture_id, *self._pending)
            self._written, self._pending = self._pending, None
            self._written_at = time.monotonic()

    def next_write_in(self) -> float | None:
        if self._pending is None:
            return None
        return max(0.0, PROGRESS_INTERVAL_S - (time.monotonic() - self._written_at))


def results_key_of(capture_id: uuid.UUID) -> str:
    """Where an analysis's series files go in the store (one folder per analyzer version)."""
    return f"captures/{capture_id}/results/{ANALYZER_VERSION}"


def _run_child(job: _Job, path: Path, out_dir: Path, results_key: str) -> dict[str, Any]:
    from tcplens.services import analysis_child

    out_dir.mkdir(parents=True)
    settings = job.ctx.settings
    receiver, sender = _MP.Pipe(duplex=False)
    child = _MP.Process(
        target=analysis_child.run,
        args=(
            str(path),
            str(out_dir),
            settings.analysis_memory_bytes,
            sender,
            str(job.capture_id),
            results_key,
        ),
        name="tcplens-analysis",
    )
    deadline = time.monotonic() + settings.analysis_timeout_s
    with _children.running(child):
        if _children.stopping:
            raise AnalysisInterrupted("the worker is stopping")
        child.start()
        sender.close()  # the child holds the only writing end: its exit (or death) ends the pipe
        try:
            outcome = "ended" if _children.stopping else _follow_child(job, receiver, deadline)
        finally:
            receiver.close()
        if outcome != "finished" and _children.stopping:
            child.kill()
            child.join()
            raise AnalysisInterrupted("the worker stopped during the analysis")
    if outcome == "finished":
        # Its files are complete: store them while the child exits (returning a large
        # analysis's memory to the kernel takes 0.1-0.3 s), and reap it meanwhile.
        threading.Thread(target=child.join, name="tcplens-analysis-reaper", daemon=True).start()
    else:
        child.join(max(0.0, deadline - time.monotonic()) if outcome == "ended" else 0)
    if outcome != "finished" and child.is_alive():
        child.kill()
        child.join()
        raise AnalysisFailed(
            "analysis_timeout",
            f"the analysis took longer than the limit of {settings.analysis_timeout_s:g} s",
        )
    job.lap("handover")
    error_file = out_dir / "error.json"
    if error_file.exists():
        error = json.loads(error_file.read_text())
        raise AnalysisFailed(str(error["code"]), str(error["message"]))
    result_file = out_dir / "result.json"
    if outcome != "finished" or not result_file.exists():
        raise _without_result(child)
    result: dict[str, Any] = json.loads(result_file.read_text())
    job.lap("load_result")
    return result


def _without_result(child: multiprocessing.process.BaseProcess) -> AnalysisFailed:
    """What to say of a child that ended without a result. Its exit code is what is known: a
    negative one is the signal that killed it (multiprocessing's convention, from waitpid). Going
    over the memory limit is not among these: RLIMIT_AS makes allocations fail, which the child
    reports itself (``analysis_memory_limit``)."""
    child.join()
    code = child.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return AnalysisKilled(
            "analysis_killed", f"the analysis process was killed by {name} before it finished"
        )
    return AnalysisFailed(
        "analysis_crashed", f"the analysis process exited with status {code} without a result"
    )


def _follow_child(
    job: _Job, receiver: Connection, deadline: float
) -> Literal["finished", "ended", "timeout"]:
    """Relay the child's stage and bytes to the capture row until it says it has finished (its
    result files are written), its pipe ends without that (refused, or died), or the deadline.
    Each stage's time is the time to the next message that names another stage (the child's
    own clock: same machine)."""
    stage: str | None = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        write_in = job.next_write_in()
        timeout = remaining if write_in is None else min(remaining, write_in)
        if not receiver.poll(timeout):
            job.flush()
            continue
        try:
            new_stage, done, total, stamp = receiver.recv()
        except EOFError:
            return "ended"
        if new_stage != stage:
            job.lap("child_startup" if stage is None else _TIMING_OF_STAGE[stage], stamp)
            stage = new_stage
        if new_stage == FINISHED:
            return "finished"
        if new_stage == "reading":
            # The reader counts bytes of the file as uploaded (compressed bytes for gzip/zstd).
            done = job.size_bytes * done // total if total > 0 else 0
        else:
            done = job.size_bytes
        if new_stage in _TIMING_OF_STAGE:
            job.progress(new_stage, done)


def _store(
    ctx: ServiceContext, capture_id: uuid.UUID, result: dict[str, Any], out: Path, job: _Job
) -> None:
    """The child's result in the database (flows by COPY from its CSV, findings, the capture's
    facts) in one transaction, after the series file the flow rows point into."""
    results = results_key_of(capture_id)
    for name in ("series.arrow", "series_overview.arrow"):
        if (out / name).exists():  # no overview when every flow is short
            ctx.store.put_file(f"{results}/{name}", out / name)
    job.lap("store_series")
    findings = [
        {
            "capture_id": capture_id,
            "rank": rank,
            "code": str(f["code"]),
            "severity": str(f["severity"]),
            "factor": f.get("factor"),
            "time_lost_s": f.get("time_lost_s"),
            "body": f,
        }
        for rank, f in enumerate(result.get("findings", []), start=1)
    ]
    facts = dict(result.get("capture", {}))
    facts["flows"] = int(result["flow_count"])
    facts["findings"] = len(findings)
    facts["tcplens_version"] = result.get("tcplens_version")
    with ctx.sessionmaker() as session:
        capture = session.get(Capture, capture_id, with_for_update=True)
        if capture is None:
            ctx.store.delete_prefix(f"captures/{capture_id}")
            return
        # Replace, never append: a re-run (retried job, new analyzer) leaves one result.
        session.execute(delete(Flow).where(Flow.capture_id == capture_id))
        session.execute(delete(Finding).where(Finding.capture_id == capture_id))
        copy_flows(session, out / "flows.copy")
        if findings:
            session.execute(insert(Finding), findings)
        capture.status = "done"
        capture.stage = None
        capture.progress_bytes = capture.size_bytes
        capture.facts = facts
        capture.format = str(facts.get("format") or capture.format)
        capture.compression = facts.get("compression", capture.compression)
        capture.analyzer_version = ANALYZER_VERSION
        capture.finished_at = datetime.now(UTC)
        job.lap("store_rows")
        capture.timings = {step: round(s, 4) for step, s in job.timings.items()}
        session.commit()


def copy_flows(session: Session, rows: Path) -> None:
    """COPY the child's flow rows, in the session's transaction."""
    raw: Any = session.connection().connection.driver_connection  # psycopg
    with raw.cursor() as cursor, cursor.copy(COPY_FLOWS) as copy, rows.open("rb") as file:
        while block := file.read(COPY_BLOCK):
            copy.write(block)
