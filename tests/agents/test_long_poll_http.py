"""GET /api/v1/agents/messages/wait against a live uvicorn: the lean path, disconnects, and the
stored cursor that only moves for a response that was written."""

import socket
import threading

import httpx
import pytest

from agents import longpoll
from agents.longpoll import PATH
from agents.models import AgentProfile
from agents.sending import send_agent_message
from osfoundry import wakeups
from tests.polling import until


def parked(count):
    return until(lambda: wakeups.registry.count() == count, f"{count} parked waiters")


def cursor(profile):
    return AgentProfile.objects.get(pk=profile.pk).last_delivered_sequence


def send(sender, n):
    send_agent_message(
        sender=sender, to="bob-codex", body=f"m{n}", idempotency_key=f"alice-m-{n:04d}"
    )


def wait(server, token, **query):
    response = httpx.get(
        server.url + PATH,
        params=query,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    return response


def open_wait(server, token, query="timeout_s=50"):
    """A raw request we can abandon: the socket closes without reading any response."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    request = (
        f"GET {PATH}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    sock.sendall(request.encode())
    return sock


@pytest.fixture
def pair(agent_token, owner, member):
    _alice_token, alice = agent_token(owner, "alice-claude")
    bob_token, bob = agent_token(member, "bob-codex")
    return alice, bob, bob_token


def test_a_parked_wait_returns_the_message_sent_meanwhile(asgi_server, pair):
    alice, bob, token = pair
    answers = []
    thread = threading.Thread(target=lambda: answers.append(wait(asgi_server, token)))
    thread.start()
    parked(1)
    send(alice, 1)
    thread.join(20)
    body = answers[0].json()
    assert answers[0].status_code == 200
    assert [(m["sequence"], m["body"], m["from"]) for m in body["messages"]] == [
        (1, "m1", "alice-claude")
    ]
    assert body["next_after_sequence"] == 1
    until(lambda: cursor(bob) == 1, "the stored cursor to follow the written response")
    assert wakeups.registry.count() == 0


def test_an_idle_wait_answers_an_empty_list(asgi_server, pair):
    _alice, _bob, token = pair
    response = wait(asgi_server, token, timeout_s=1)
    assert response.json() == {"messages": [], "next_after_sequence": 0, "has_more": False}


def test_the_wait_needs_a_token_and_a_profile(asgi_server, pair, token_factory, stranger):
    response = httpx.get(asgi_server.url + PATH)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'
    no_profile = wait(asgi_server, token_factory(stranger), timeout_s=0)
    assert no_profile.status_code == 404
    assert no_profile.json()["error"]["code"] == "no_profile"
    write_only = wait(asgi_server, token_factory(stranger, "osfoundry:write"), timeout_s=0)
    assert write_only.status_code == 403


def test_a_foreign_host_is_refused_before_anything_is_read(asgi_server, pair):
    alice, bob, token = pair
    send(alice, 1)
    response = httpx.get(
        asgi_server.url + PATH,
        params={"timeout_s": 0},
        headers={"Authorization": f"Bearer {token}", "Host": "evil.example"},
    )
    assert response.status_code == 403
    assert response.json() == {
        "error": {"code": "bad_host", "message": "Forbidden: unknown Host header"}
    }
    assert cursor(bob) == 0
    assert wakeups.registry.count() == 0


@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:1", "https://127.0.0.1:{port}", "http://evil.example"]
)
def test_an_origin_that_is_not_ours_is_refused_before_anything_is_read(asgi_server, pair, origin):
    alice, bob, token = pair
    send(alice, 1)
    origin = origin.format(port=asgi_server.port)
    response = httpx.get(
        asgi_server.url + PATH,
        params={"timeout_s": 0},
        headers={"Authorization": f"Bearer {token}", "Origin": origin},
    )
    assert response.status_code == 403
    assert response.json() == {
        "error": {"code": "bad_origin", "message": f"Forbidden: Origin {origin!r} is not allowed"}
    }
    assert cursor(bob) == 0


def test_our_own_origin_may_wait(asgi_server, pair):
    alice, _bob, token = pair
    send(alice, 1)
    response = httpx.get(
        asgi_server.url + PATH,
        params={"timeout_s": 0},
        headers={"Authorization": f"Bearer {token}", "Origin": asgi_server.url},
    )
    assert response.status_code == 200
    assert [m["body"] for m in response.json()["messages"]] == ["m1"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"timeout_s": 51}, "timeout_s: must be at most 50"),
        ({"limit": 0}, "limit: must be at least 1"),
        ({"after_sequence": -1}, "after_sequence: must be at least 0"),
        ({"after_sequence": "x"}, "after_sequence: must be an integer"),
        ({"since": 3}, "since: unknown field; remove it"),
    ],
)
def test_bad_query_parameters_are_named(asgi_server, pair, query, message):
    _alice, _bob, token = pair
    response = wait(asgi_server, token, **query)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(message)


def test_a_parameter_given_twice_is_named(asgi_server, pair):
    _alice, _bob, token = pair
    response = httpx.get(
        asgi_server.url + PATH,
        params=[("limit", "1"), ("limit", "2")],
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["field"], error["message"]) == ("limit", "limit: given twice; pass it once")


def test_a_client_that_leaves_while_parked_leaves_nothing_behind(asgi_server, pair):
    alice, bob, token = pair
    sock = open_wait(asgi_server, token)
    parked(1)
    sock.close()
    parked(0)  # the disconnect ended the wait at once
    send(alice, 1)
    assert cursor(bob) == 0
    # Nothing was lost: a call without after_sequence gets the message.
    assert [m["body"] for m in wait(asgi_server, token, timeout_s=0).json()["messages"]] == ["m1"]


def finished_requests(monkeypatch) -> list:
    """The long-poll requests the server has finished with, in order."""
    finished: list = []
    handle = longpoll.handle

    async def handle_and_note(scope, receive, send):
        try:
            await handle(scope, receive, send)
        finally:
            finished.append(scope["query_string"])

    monkeypatch.setattr(longpoll, "handle", handle_and_note)
    return finished


def test_a_response_the_client_never_read_does_not_move_the_cursor(asgi_server, pair, monkeypatch):
    alice, bob, token = pair
    finished = finished_requests(monkeypatch)
    send(alice, 1)
    sock = open_wait(asgi_server, token)
    sock.close()  # before the server could answer
    until(lambda: len(finished) == 1, "the server to finish with the abandoned request")
    assert cursor(bob) == 0
    again = wait(asgi_server, token, timeout_s=0).json()
    assert [m["sequence"] for m in again["messages"]] == [1]
    until(lambda: cursor(bob) == 1, "the cursor to move after a written response")


@pytest.mark.parametrize("client_keeps_cursor", [True, False], ids=["after_sequence", "resume"])
def test_every_fifth_response_dropped_still_processes_all_twenty(
    asgi_server, pair, client_keeps_cursor
):
    alice, bob, token = pair
    processed: list[str] = []
    last = 0
    for n in range(1, 21):
        if n % 5 == 0:
            # This round's response is lost: the client goes away while its call is parked.
            until(lambda last=last: cursor(bob) == last, "the last response to be recorded")
            query = f"timeout_s=50&after_sequence={last}" if client_keeps_cursor else ""
            sock = open_wait(asgi_server, token, query or "timeout_s=50")
            parked(1)
            sock.close()
            parked(0)
            send(alice, n)
            assert cursor(bob) == last  # never moved for the unwritten response
            continue
        send(alice, n)
        query = {"after_sequence": last} if client_keeps_cursor else {}
        page = wait(asgi_server, token, timeout_s=50, **query).json()
        processed += [m["body"] for m in page["messages"]]
        last = page["next_after_sequence"]
    query = {"after_sequence": last} if client_keeps_cursor else {}
    processed += [
        m["body"] for m in wait(asgi_server, token, timeout_s=1, **query).json()["messages"]
    ]
    assert processed == [f"m{n}" for n in range(1, 21)]


def test_an_unknown_token_is_refused_with_the_challenge(asgi_server, pair):
    response = wait(asgi_server, "osf_not-a-real-token", timeout_s=0)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'
    assert response.json() == {
        "error": {
            "code": "invalid_token",
            "message": "A valid bearer token is required: send Authorization: Bearer <token>",
        }
    }


def test_only_get_is_allowed(asgi_server, pair):
    _alice, _bob, token = pair
    response = httpx.post(
        asgi_server.url + PATH, headers={"Authorization": f"Bearer {token}"}, json={}
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    assert response.json() == {"error": {"code": "method_not_allowed", "message": "Use GET"}}


def test_past_their_bound_the_remembered_token_keys_start_over(
    asgi_server, agent_token, owner, member, monkeypatch
):
    monkeypatch.setattr(longpoll, "token_keys", {})
    monkeypatch.setattr(longpoll, "MAX_TOKEN_KEYS", 1)
    alice_token, alice = agent_token(owner, "alice-claude")
    bob_token, bob = agent_token(member, "bob-codex")
    send(alice, 1)
    send_agent_message(sender=bob, to="alice-claude", body="back", idempotency_key="bob-m-0001")
    for token, body in ((alice_token, "back"), (bob_token, "m1"), (alice_token, "back")):
        response = wait(asgi_server, token, timeout_s=0, after_sequence=0)
        assert [m["body"] for m in response.json()["messages"]] == [body]
    assert list(longpoll.token_keys.values()) == [alice.connection_key]
