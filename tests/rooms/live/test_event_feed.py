"""The Room event websocket: session and bearer auth, order, resume, refusal."""

import json
import socket

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as websocket_connect

from osfoundry.asgi import application
from rooms.models import Room
from rooms.services import approve_proposal, propose_snippet

pytestmark = pytest.mark.django_db(transaction=True)


def session_headers(user, origin=b"http://127.0.0.1"):
    """What a browser on our page sends: its Host, its Origin and the session cookie."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    headers = [(b"host", b"127.0.0.1"), (b"cookie", f"sessionid={cookie}".encode())]
    return headers + ([(b"origin", origin)] if origin is not None else [])


def bearer_headers(token, host=b"127.0.0.1"):
    """What an agent sends: our Host, as every handshake names it, and no Origin (it is not a
    browser)."""
    headers = [(b"authorization", f"Bearer {token}".encode())]
    return headers + ([(b"host", host)] if host is not None else [])


def feed(room, headers, after=None):
    path = f"/ws/rooms/{room.pk}/events/"
    if after is not None:
        path += f"?after_sequence={after}"
    return WebsocketCommunicator(application, path, headers=headers)


@database_sync_to_async
def propose(room, agent, files, key, name="Timer"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    ).proposal


@database_sync_to_async
def approve(owner, proposal):
    return approve_proposal(owner=owner, proposal_id=proposal.pk)


async def receive_all(communicator, count):
    return [await communicator.receive_json_from(timeout=5) for _ in range(count)]


async def test_member_session_gets_the_backlog_in_order_then_live_events(
    room, owner, member, agent, files
):
    proposal = await propose(room, agent, files, "feed-key-1")
    await approve(owner, proposal)
    communicator = feed(room, await database_sync_to_async(session_headers)(member))
    connected, _ = await communicator.connect()
    assert connected
    backlog = await receive_all(communicator, 3)
    assert [e["sequence"] for e in backlog] == [1, 2, 3]
    assert [e["type"] for e in backlog] == ["proposal.created", "proposal.approved", "app.created"]
    assert "name" not in backlog[0]  # pending content is redacted for members
    assert backlog[2]["name"] == "Timer"

    second = await propose(room, agent, files, "feed-key-2", name="Board")
    await approve(owner, second)
    live = await receive_all(communicator, 3)
    assert [e["sequence"] for e in live] == [4, 5, 6]
    assert live[2]["type"] == "app.created" and live[2]["name"] == "Board"
    await communicator.disconnect()


async def test_owner_sees_new_proposals_live(room, owner, agent, files):
    communicator = feed(room, await database_sync_to_async(session_headers)(owner))
    assert (await communicator.connect())[0]
    assert await communicator.receive_nothing(timeout=0.1)
    await propose(room, agent, files, "feed-key-3", name="Poll")
    event = await communicator.receive_json_from(timeout=5)
    assert event["type"] == "proposal.created"
    assert event["name"] == "Poll"
    assert event["proposed_by"] == "agent"
    assert (event["agent"], event["proposed_via"]) == ("", "")  # no token: no handle, no via
    assert event["total_bytes"] > 0
    await communicator.disconnect()


async def test_resume_after_a_sequence(room, owner, agent, files):
    for index in range(3):
        await propose(room, agent, files, f"feed-key-r{index}", name=f"App {index}")
    communicator = feed(room, await database_sync_to_async(session_headers)(owner), after=2)
    assert (await communicator.connect())[0]
    event = await communicator.receive_json_from(timeout=5)
    assert event["sequence"] == 3
    assert await communicator.receive_nothing(timeout=0.1)
    await communicator.send_json_to({"after_sequence": 0})
    again = await receive_all(communicator, 3)
    assert [e["sequence"] for e in again] == [1, 2, 3]
    await communicator.disconnect()


async def test_agent_with_a_read_token_gets_events(room, owner, agent, files, token_factory):
    token = await database_sync_to_async(token_factory)(agent, "osfoundry:read")
    proposal = await propose(room, agent, files, "feed-key-4")
    await approve(owner, proposal)
    communicator = feed(room, bearer_headers(token))
    assert (await communicator.connect())[0]
    events = await receive_all(communicator, 3)
    assert events[1]["type"] == "proposal.approved"
    assert events[1]["decided_by"] == "owner"
    await communicator.disconnect()


async def test_token_without_read_scope_is_refused(room, agent, token_factory):
    token = await database_sync_to_async(token_factory)(agent, "osfoundry:write")
    connected, code = await feed(room, bearer_headers(token)).connect()
    assert (connected, code) == (False, 4401)


async def test_unknown_token_is_refused(room):
    connected, code = await feed(room, bearer_headers("osf_not-a-token")).connect()
    assert (connected, code) == (False, 4401)


async def test_anonymous_is_refused(room):
    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
    connected, code = await feed(room, headers).connect()
    assert (connected, code) == (False, 4401)


async def test_stranger_is_refused(room, stranger):
    headers = await database_sync_to_async(session_headers)(stranger)
    connected, code = await feed(room, headers).connect()
    assert (connected, code) == (False, 4404)


async def test_local_room_is_refused_to_agents_but_open_to_its_owner(
    room_factory, owner, agent, token_factory
):
    local = await database_sync_to_async(room_factory)(kind=Room.Kind.LOCAL, members=[agent])
    token = await database_sync_to_async(token_factory)(agent, "osfoundry:read")
    connected, code = await feed(local, bearer_headers(token)).connect()
    assert (connected, code) == (False, 4404)
    communicator = feed(local, await database_sync_to_async(session_headers)(owner))
    assert (await communicator.connect())[0]
    await communicator.disconnect()


async def test_foreign_origin_is_refused(room, owner):
    headers = await database_sync_to_async(session_headers)(owner, b"http://evil.example")
    connected, code = await feed(room, headers).connect()
    assert (connected, code) == (False, 4403)


@pytest.mark.parametrize(
    "origin",
    [b"http://127.0.0.1:1", b"https://127.0.0.1", b"http://localhost", None],
    ids=["another-port", "another-scheme", "another-host-name", "no-origin"],
)
async def test_a_session_needs_our_exact_origin(room, owner, origin):
    # The cookie rides along with any page's request: only our own pages may open the feed.
    headers = await database_sync_to_async(session_headers)(owner, origin)
    connected, code = await feed(room, headers).connect()
    assert (connected, code) == (False, 4403)


async def test_a_session_from_the_public_origin_is_allowed(room, owner, settings):
    settings.PUBLIC_ORIGIN = "https://rooms.example.com"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "rooms.example.com"]
    headers = await database_sync_to_async(session_headers)(owner, b"https://rooms.example.com")
    headers = [(b"host", b"rooms.example.com"), *headers[1:]]
    communicator = feed(room, headers)
    assert (await communicator.connect())[0]
    await communicator.disconnect()


async def test_a_session_with_a_foreign_host_is_refused(room, owner):
    # DNS rebinding: a page on evil.example resolved to us sends its own Host and Origin.
    headers = await database_sync_to_async(session_headers)(owner, b"http://evil.example")
    headers = [(b"host", b"evil.example"), *headers[1:]]
    connected, code = await feed(room, headers).connect()
    assert (connected, code) == (False, 4403)


@pytest.mark.parametrize("host", [b"evil.example", None], ids=["foreign", "none"])
async def test_a_token_with_a_host_that_is_not_ours_is_refused(room, agent, token_factory, host):
    token = await database_sync_to_async(token_factory)(agent, "osfoundry:read")
    connected, code = await feed(room, bearer_headers(token, host)).connect()
    assert (connected, code) == (False, 4403)


async def test_a_token_needs_no_origin(room, owner, agent, files, token_factory):
    # A page cannot set Authorization on a websocket: a bearer connection is never a browser's.
    token = await database_sync_to_async(token_factory)(agent, "osfoundry:read")
    await propose(room, agent, files, "feed-key-5")
    communicator = feed(room, bearer_headers(token))
    assert await communicator.connect() == (True, None)
    event = await communicator.receive_json_from(timeout=5)
    assert (event["sequence"], event["type"]) == (1, "proposal.created")
    await communicator.disconnect()


async def test_a_bearer_header_never_lends_a_foreign_page_the_session(room, owner):
    # A bearer connection skips the Origin check, so it must never fall back to the cookie.
    headers = await database_sync_to_async(session_headers)(owner, b"http://evil.example")
    headers = [*headers, (b"authorization", b"Bearer osf_not-a-token")]
    connected, code = await feed(room, headers).connect()
    assert (connected, code) == (False, 4401)


@pytest.mark.parametrize(
    "frame",
    [{"text_data": "after_sequence=0"}, {"text_data": "[" * 2000}, {"bytes_data": b"\x00"}],
    ids=["text", "deeply-nested", "binary"],
)
async def test_a_frame_that_is_not_json_gets_an_error_and_the_feed_stays_open(
    room, owner, agent, files, frame
):
    await propose(room, agent, files, "feed-key-6")
    communicator = feed(room, await database_sync_to_async(session_headers)(owner))
    assert (await communicator.connect())[0]
    assert (await communicator.receive_json_from(timeout=5))["sequence"] == 1
    await communicator.send_to(**frame)
    assert await communicator.receive_json_from(timeout=5) == {
        "error": {
            "code": "invalid_frame",
            "message": 'Send a JSON text frame such as {"after_sequence": 0} to resume after a '
            "sequence; the feed sends events on its own",
        }
    }
    await communicator.send_json_to({"after_sequence": 0})
    assert (await communicator.receive_json_from(timeout=5))["sequence"] == 1
    await communicator.disconnect()


async def test_a_json_frame_of_another_shape_gets_an_error(room, owner):
    communicator = feed(room, await database_sync_to_async(session_headers)(owner))
    assert (await communicator.connect())[0]
    await communicator.send_json_to({"after_sequence": "5"})
    assert (await communicator.receive_json_from(timeout=5))["error"]["code"] == "invalid_frame"
    await communicator.disconnect()


def test_a_token_opens_the_feed_of_a_real_server_without_origin(
    asgi_server, room, agent, files, token_factory
):
    propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="feed-live1"
    )
    url = f"ws://127.0.0.1:{asgi_server.port}/ws/rooms/{room.pk}/events/"
    headers = {"Authorization": f"Bearer {token_factory(agent, 'osfoundry:read')}"}
    with websocket_connect(url, additional_headers=headers, open_timeout=10) as socket:
        assert socket.response.status_code == 101
        assert "origin" not in socket.request.headers
        event = json.loads(socket.recv(timeout=5))
    assert (event["sequence"], event["type"]) == (1, "proposal.created")


def test_a_session_from_another_port_is_refused_by_a_real_server(asgi_server, room, owner):
    cookie = dict(session_headers(owner))[b"cookie"].decode()
    url = f"ws://127.0.0.1:{asgi_server.port}/ws/rooms/{room.pk}/events/"
    headers = {"Cookie": cookie, "Origin": "http://127.0.0.1:1"}
    with pytest.raises(InvalidStatus) as refused:
        websocket_connect(url, additional_headers=headers, open_timeout=10)
    assert refused.value.response.status_code == 403
    own = {"Cookie": cookie, "Origin": f"http://127.0.0.1:{asgi_server.port}"}
    with websocket_connect(url, additional_headers=own, open_timeout=10) as socket:
        assert socket.response.status_code == 101


@pytest.mark.parametrize("origin", ["http://evil.example", None], ids=["its-origin", "no-origin"])
def test_a_foreign_host_is_refused_by_a_real_server_whatever_the_credentials(
    asgi_server, room, agent, token_factory, origin
):
    # DNS rebinding: evil.example resolves to us, so the handshake names it as the Host. A
    # valid read token must not open the feed there, as no HTTP route answers a foreign Host.
    path = f"/ws/rooms/{room.pk}/events/"
    headers = {"Authorization": f"Bearer {token_factory(agent, 'osfoundry:read')}"}
    if origin is not None:
        headers["Origin"] = origin
    # Connected to us, the handshake names the URI's host: Host: evil.example.
    with socket.create_connection(("127.0.0.1", asgi_server.port)) as to_us:
        with pytest.raises(InvalidStatus) as refused:
            websocket_connect(
                f"ws://evil.example{path}", sock=to_us, additional_headers=headers, open_timeout=10
            )
    assert refused.value.response.status_code == 403
    own = f"ws://127.0.0.1:{asgi_server.port}{path}"
    with websocket_connect(own, additional_headers=headers, open_timeout=10) as feed_socket:
        assert feed_socket.response.status_code == 101


async def test_an_after_sequence_that_is_not_a_number_resumes_from_the_start(
    room, owner, agent, files
):
    for index in range(2):
        await propose(room, agent, files, f"feed-key-n{index}", name=f"App {index}")
    headers = await database_sync_to_async(session_headers)(owner)
    path = f"/ws/rooms/{room.pk}/events/?after_sequence=latest"
    communicator = WebsocketCommunicator(application, path, headers=headers)
    assert (await communicator.connect())[0]
    assert [e["sequence"] for e in await receive_all(communicator, 2)] == [1, 2]
    await communicator.disconnect()
