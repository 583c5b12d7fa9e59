"""The seeds' eight calls (SPEC §3) come out exactly as listed, through the REST API."""

import json

import pytest

from rooms.models import Proposal

APP = "export default function App() { return <p>hi</p>; }"


def case_args(case):
    files = {"src/App.tsx": APP, "src/styles.css": "p { color: red; }"}
    body = {"name": "Standup timer", "files": files, "idempotency_key": f"snip-{case}-0001"}
    if case == "no App.tsx":
        body["files"] = {"src/main.tsx": APP}
    elif case == "absolute path":
        body["files"] = {**files, "/etc/hosts": "x"}
    elif case == "dot-dot path":
        body["files"] = {**files, "src/../../x.ts": "x"}
    elif case == "backslash path":
        body["files"] = {**files, "src\\x.ts": "x"}
    elif case == "name 201 chars":
        body["name"] = "n" * 201
    elif case == "key 7 chars":
        body["idempotency_key"] = "abcdefg"
    elif case == "extra field":
        body["visibility"] = "public"
    elif case == "non-string file":
        body["files"] = {"src/App.tsx": APP, "a": 1}
    return body


EXPECTED = [
    ("ok", None, None),
    # A file's problem names that file: `files.<path>`, as a schema error on one file does.
    ("no App.tsx", "files.src/App.tsx", "src/App.tsx missing"),
    ("absolute path", "files./etc/hosts", "unsafe path '/etc/hosts'"),
    ("dot-dot path", "files.src/../../x.ts", "unsafe path 'src/../../x.ts'"),
    ("backslash path", "files.src\\x.ts", "unsafe path 'src\\\\x.ts'"),
    ("name 201 chars", "name", "name: is too long: 201 characters, at most 200 allowed"),
    ("key 7 chars", "idempotency_key", "idempotency_key: is too short: 7 characters, at least 8"),
    ("extra field", "visibility", "visibility: unknown field; remove it"),
    ("non-string file", "files.a", "files.a: must be a string, got int 1"),
]


@pytest.mark.parametrize(("case", "field", "message"), EXPECTED, ids=[c[0] for c in EXPECTED])
def test_seed_case(client, room, agent, token_factory, case, field, message):
    response = client.post(
        f"/api/v1/rooms/{room.pk}/proposals/snippet",
        json.dumps(case_args(case)),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}",
    )
    if message is None:
        assert response.status_code == 201
        assert response.json()["status"] == "pending"
        assert Proposal.objects.count() == 1
        return
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field
    assert error["message"].startswith(message)
    assert not Proposal.objects.exists()
