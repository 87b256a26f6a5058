"""Property-based fuzzing of every operation of the API, driven by the app's own OpenAPI schema
(schemathesis generates valid and invalid requests from it; hypothesis shrinks a failure to its
smallest request), sent to the real app: embedded PostgreSQL, the real worker, two tenants.

Each operation is fuzzed as a member of the ``home`` workspace (API token), anonymously, and, for
``/shared/{token}/…``, with share tokens. Every answer must be:

* never a 5xx, never a traceback;
* a 4xx only as ``application/problem+json`` whose ``status`` is the HTTP status and whose ``code``
  is one the API defines (a domain error code or an HTTP status name);
* what the schema says (documented status, content type, headers and body);
* free of the ``foreign`` tenant's ids, e-mail and file name unless the request carried them.

The run is bounded and reproducible: a fixed number of examples per operation and mode,
derandomized (the same requests every run), no example database, no shrinking. A failure prints the request as
a curl command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from http import HTTPStatus
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.python.asgi import ASGIClient
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tcplens import errors
from tcplens.api.problems import PROBLEM_JSON
from tcplens.main import create_app
from tests.api.service_fixtures import PASSWORD
from tests.api.tenants import Tenants, tenants

__all__ = ["tenants"]  # the fixture, imported for pytest

# Examples per operation, per caller and generation mode. An anonymous caller is refused
# before its input is read, so fewer of its requests teach anything.
EXAMPLES = {
    "member": {GenerationMode.POSITIVE: 12, GenerationMode.NEGATIVE: 8},
    "session": {GenerationMode.POSITIVE: 8, GenerationMode.NEGATIVE: 4},
    "anonymous": {GenerationMode.POSITIVE: 6, GenerationMode.NEGATIVE: 4},
    "sign-in": {GenerationMode.POSITIVE: 12, GenerationMode.NEGATIVE: 8},
    "share": {GenerationMode.POSITIVE: 12, GenerationMode.NEGATIVE: 8},
}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
CODE = re.compile(r"^[a-z][a-z0-9_]*$")
TRACEBACK = (b"Traceback (most recent call last)", b'File "/')


@cache
def openapi_document() -> dict[str, Any]:
    # Built from the routes alone (no database), as scripts/export-openapi does.
    return create_app().openapi()


def operations() -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in openapi_document()["paths"].items()
        for method in item
    ]


SESSION_ENDING = ("/api/v1/auth/logout", "/api/v1/auth/logout-everywhere", "/api/v1/auth/password")


def callers_of(method: str, path: str) -> list[str]:
    """member: an API token; session: the browser's cookie and CSRF header (signing out, out
    everywhere or changing the password would end it for the rest of the run, so not those);
    anonymous; share: a share link's token."""
    if path.startswith("/api/v1/shared/"):
        return ["share"]
    if path in ("/api/v1/auth/signup", "/api/v1/auth/login"):
        return ["sign-in"]  # anonymous; each request costs an argon2 hash, so only once
    if method == "POST" and path in SESSION_ENDING:
        return ["member", "anonymous"]
    return ["member", "session", "anonymous"]


CASES = [(caller, m, p) for m, p in operations() for caller in callers_of(m, p)]


def negatable(definition: dict[str, Any]) -> bool:
    """Whether a request to the operation can break its schema: not when it has no body and its
    parameters are plain strings (a share token), which any value satisfies."""
    plain_string = {"type": "string"}
    return "requestBody" in definition or any(
        {k: v for k, v in p["schema"].items() if k != "title"} != plain_string
        for p in definition.get("parameters", [])
    )


def known_problem_codes() -> set[str]:
    """Every code the API may put in a problem: its domain errors' and the HTTP status names
    (routing's 404/405) rendered by ``problems._http_error``."""
    codes = {"invalid_input"}
    pending: list[type[errors.TcplensError]] = [errors.TcplensError]
    while pending:
        family = pending.pop()
        codes.add(family.code)
        pending.extend(family.__subclasses__())
    for status in HTTPStatus:
        if 400 <= status < 500:
            codes.add(status.phrase.lower().replace(" ", "_").replace("-", "_"))
    return codes


def substitutions(world: Tenants, method: str, path: str) -> dict[str, list[str | int]]:
    """Values worth trying for a parameter besides generated ones: real ids of both tenants, so
    the fuzzer reaches the code behind the 404. Never the home ids a DELETE would destroy."""
    home, foreign = world.home, world.foreign
    deleting = method == "DELETE"
    return {
        "capture_id": [foreign.capture_id]
        if path.endswith("{capture_id}") and deleting
        else [home.capture_id, foreign.capture_id],
        "flow_id": [*home.flow_ids[:3], *foreign.flow_ids[:1]],
        "workspace_id": [str(home.actor.workspace_id), str(foreign.actor.workspace_id)],
        "user_id": [str(home.actor.user_id), str(foreign.actor.user_id)],
        "link_id": [foreign.share_link_id]
        if deleting
        else [home.share_link_id, foreign.share_link_id],
        "token_id": [foreign.token_id],
        "token": [home.share_token, world.revoked_share_token, world.expired_share_token],
        "q": [home.filename, "second"],
        "finding": ["nagle-delayed-ack", "dns"],
        # bodies: an address and a password that exist (sign-in, invitations), a plain name
        "email": [home.actor.email, "someone-new@example.com"],
        "password": [PASSWORD],
        "name": ["fuzzed name"],
    }


# Characters a generator rarely produces and storage or headers choke on: NUL (PostgreSQL text
# cannot hold it), a bidi override, a line break, an escape sequence.
HOSTILE_CHARACTERS = ["\x00", "\u202e", "\r\n", "\x1b[2J"]


def with_known_values(case: Any, data: st.DataObject, known: dict[str, list[str | int]]) -> None:
    """Replace some generated values with real ones (ids, a file name, an address that exists),
    then put a hostile character into the middle of some of the text."""
    containers = [case.path_parameters, case.query]
    if isinstance(case.body, dict):
        containers.append(case.body)
    for container in containers:
        if not container:
            continue
        for name in list(container):
            choices = known.get(name)
            if choices:
                value = data.draw(st.sampled_from([*choices, None]), label=name)
                if value is not None:
                    container[name] = value
    for container in containers[1:]:  # a path segment cannot carry them all
        for name, value in list((container or {}).items()):
            if isinstance(value, str):
                hostile = data.draw(st.sampled_from([None, *HOSTILE_CHARACTERS]), label=name)
                if hostile is not None:
                    middle = len(value) // 2
                    container[name] = value[:middle] + hostile + value[middle:]


def sent_text(case: Any) -> str:
    """What the caller sent (path, query, body), as text: an answer may echo that back."""
    return json.dumps(
        [case.formatted_path, case.query, case.body], default=repr, ensure_ascii=False
    )


def assert_problem_shape(response: schemathesis.Response, codes: set[str], where: str) -> None:
    status = response.status_code
    assert status < 500, f"{where}: {status} {response.content[:500]!r}"
    assert not any(marker in response.content for marker in TRACEBACK), f"{where}: traceback"
    if 400 <= status < 500:
        media = response.headers.get("content-type", [""])[0].split(";")[0].strip()
        assert media == PROBLEM_JSON, f"{where}: {status} as {media!r}"
        problem = json.loads(response.content)
        assert problem["status"] == status, f"{where}: {problem}"
        assert isinstance(problem.get("detail"), str) and isinstance(problem.get("title"), str)
        assert CODE.match(problem["code"]) and problem["code"] in codes, f"{where}: {problem}"


def assert_no_foreign_data(
    response: schemathesis.Response, markers: list[str], sent: str, where: str
) -> None:
    answer = response.content + json.dumps(response.headers).encode()
    for marker in markers:
        if marker not in sent:
            leaked = marker.encode() in answer
            assert not leaked, f"{where}: the answer carries {marker!r} of another tenant"


def case_id(caller: str, method: str, path: str) -> str:
    # selectable with -k: member-GET-captures.capture_id.flows
    return f"{caller}-{method}-" + path.removeprefix("/api/v1/").translate(
        str.maketrans("/", ".", "{}")
    )


@pytest.mark.parametrize(("caller", "method", "path"), CASES, ids=[case_id(*c) for c in CASES])
def test_operation_answers_within_its_contract(
    tenants: Tenants, caller: str, method: str, path: str
) -> None:
    schema = schemathesis.openapi.from_dict(openapi_document())
    operation = schema[path][method]
    headers = {"member": tenants.home.bearer, "session": tenants.home.session}.get(caller, {})
    signed_in = tenants.client.get("/api/v1/auth/me", headers=headers).status_code
    assert signed_in == (200 if headers else 401), caller  # the caller is who it claims to be
    known = substitutions(tenants, method, path)
    markers = tenants.foreign_markers()
    codes = known_problem_codes()
    # Requests go through the app already started by the fixture (its lifespan and worker);
    # schemathesis' ASGI client only carries them, with a fresh cookie jar per request.
    # (schemathesis types an ASGI app's send as taking a dict, Starlette's as a MutableMapping)
    session = ASGIClient(tenants.app, base_url="http://testserver")  # type: ignore[arg-type]

    def run(mode: GenerationMode) -> Callable[[], None]:
        @settings(
            max_examples=EXAMPLES[caller][mode],
            derandomize=True,
            database=None,
            # No shrinking: with a real server behind each example it could take minutes; the
            # failing request is printed as curl and recurs on every run (derandomized).
            phases=[Phase.explicit, Phase.generate],
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
        def fuzz(case: Any, data: st.DataObject) -> None:
            if mode is GenerationMode.POSITIVE:
                with_known_values(case, data, known)
            session.cookies.clear()
            response = case.call(session=session, base_url="http://testserver", headers=headers)
            where = f"{caller}: {case.as_curl_command(headers=headers)}"
            case.validate_response(response, checks=CHECKS, headers=headers)
            assert_problem_shape(response, codes, where)
            assert_no_foreign_data(response, markers, sent_text(case), where)

        return fuzz

    definition = openapi_document()["paths"][path][method.lower()]
    for mode in EXAMPLES[caller]:
        if mode is GenerationMode.NEGATIVE and not negatable(definition):
            continue
        run(mode)()
