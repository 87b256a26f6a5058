"""The flows table's rows go through COPY's text format: what comes back from PostgreSQL is what
the report said, whatever characters its JSON holds, with NULL where the report has null."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select

from tcplens.db.captures import Flow
from tcplens.db.engine import make_sessionmaker
from tcplens.main import create_app
from tcplens.services.analysis import copy_flows
from tcplens.services.flow_rows import flow_time_lost, write_flow_rows
from tcplens.settings import Settings
from tests.api.service_fixtures import sign_up, tiny_pcap


def _flow(flow_id: int, **change: object) -> dict[str, object]:
    return {
        "id": flow_id,
        "client": "[2001:db8::1]:40000",
        "server": "10.0.0.2:80",
        "start_s": 0.25,
        "duration_s": 2.0,
        "bytes": {"client_to_server": 100, "server_to_client": 900},
        "packets": 12,
        "retransmissions": 1,
        "limiting_factor": "loss",
        "factor_shares": {"loss": 0.5},
        **change,
    }


def test_flow_rows_survive_copy_exactly(tmp_path: Path, engine: Engine) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", spa_dir=tmp_path / "spa", in_process_worker=False
    )
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        actor = sign_up(client)
        response = client.post(
            "/api/v1/captures?filename=a.pcap", content=tiny_pcap(b"rows"), headers=actor.headers()
        )
    capture_id = uuid.UUID(response.json()["capture"]["id"])
    awkward = 'tab\there, newline\nthere, back\\slash, "quotes", \\N, é'
    report = {
        "flows": [
            _flow(1, note=awkward),
            _flow(2, limiting_factor=None, duration_s=0.0, rtt_ms=None),
        ],
        "findings": [{"flows": [1, 2], "time_lost_s": 1.5}, {"flows": [1], "time_lost_s": None}],
    }
    keys: dict[int, dict[str, Any]] = {1: {"key": "k", "client_to_server": [0, 7]}, 2: {"key": "k"}}
    rows = tmp_path / "flows.copy"
    assert write_flow_rows(rows, report, capture_id=str(capture_id), series_keys=keys) == 2

    sessions = make_sessionmaker(engine)
    with sessions() as session:
        copy_flows(session, rows)
        session.commit()
        flows = {
            f.flow_id: f for f in session.scalars(select(Flow).where(Flow.capture_id == capture_id))
        }
    assert flows[1].summary == report["flows"][0]  # type: ignore[index]
    assert flows[1].summary["note"] == awkward
    assert flows[1].client == "[2001:db8::1]:40000" and flows[1].limiting_factor == "loss"
    assert flows[1].series_keys == keys[1]
    assert flows[1].throughput_bps == 8 * 1000 / 2.0 and flows[1].bytes_total == 1000
    assert flows[1].time_lost_s == 0.75  # half of the finding naming flows 1 and 2
    assert flows[2].limiting_factor is None and flows[2].throughput_bps == 0.0
    assert flows[2].summary["rtt_ms"] is None and flows[2].time_lost_s == 0.75


def test_a_flows_time_lost_is_the_diagnosis_own_per_flow_time() -> None:
    # A 296 ms flow named with a 4 s one by a finding of 4.24 s: its own 0.2 s, not half of 4.24.
    findings = [
        {
            "flows": [1, 2],
            "time_lost_s": 4.24,
            "evidence": {"flow_time_lost_s": {"1": 4.04, "2": 0.2}},
        },
        {"flows": [2], "time_lost_s": 0.05, "evidence": {"flow_time_lost_s": {"2": 0.05}}},
        {"flows": [1, 2], "time_lost_s": 1.0},  # stored before the field existed: shared
    ]
    assert flow_time_lost(findings) == pytest.approx({1: 4.54, 2: 0.75})
