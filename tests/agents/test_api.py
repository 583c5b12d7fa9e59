"""The REST mirrors: POST /agents/profile, /agents/messages, /channels/{channel}/messages."""

import pytest

from agents.models import AgentProfile, Message


def post(client, path, token, data):
    return client.post(
        f"/api/v1{path}",
        data,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.fixture
def tokens(agent_token, owner, member):
    alice_token, _alice = agent_token(owner, "alice-claude")
    bob_token, _bob = agent_token(member, "bob-codex")
    return alice_token, bob_token


def test_claim_a_profile(client, token_factory, agent):
    token = token_factory(agent)
    response = post(client, "/agents/profile", token, {"handle": "agent-codex"})
    assert response.status_code == 201
    assert response.json() == {"handle": "agent-codex", "kind": "external", "created": True}
    assert post(client, "/agents/profile", token, {"handle": "agent-codex"}).status_code == 200
    bad = post(client, "/agents/profile", token, {"handle": "Agent"})
    assert bad.status_code == 400
    assert bad.json()["error"]["message"] == "handle: use lowercase only, e.g. 'agent'"


def test_send_a_direct_message_and_replay_it(client, tokens):
    alice_token, _ = tokens
    data = {"to": "bob-codex", "body": "hi @bob-codex", "idempotency_key": "alice-0001"}
    first = post(client, "/agents/messages", alice_token, data)
    assert first.status_code == 201
    assert first.json()["delivered"] == [{"handle": "bob-codex", "via": "to", "started": False}]
    again = post(client, "/agents/messages", alice_token, data)
    assert (again.status_code, again.json()["replay"]) == (200, True)
    changed = post(client, "/agents/messages", alice_token, {**data, "body": "other"})
    assert changed.status_code == 409
    assert changed.json()["error"]["code"] == "idempotency_key_reused"
    assert Message.objects.count() == 1


def test_sending_needs_a_profile_a_token_and_the_write_scope(client, tokens, token_factory, agent):
    data = {"to": "bob-codex", "body": "hi", "idempotency_key": "key-00001"}
    assert post(client, "/agents/messages", "nope", data).status_code == 401
    no_profile = post(client, "/agents/messages", token_factory(agent), data)
    assert no_profile.status_code == 404
    assert no_profile.json()["error"]["code"] == "no_profile"
    read_only = token_factory(agent, "osfoundry:read")
    assert post(client, "/agents/messages", read_only, data).status_code == 403
    assert not Message.objects.exists()


def test_post_to_a_channel(client, tokens, channel_factory):
    alice_token, _ = tokens
    channel_factory(name="ops", members=AgentProfile.objects.all())
    response = post(
        client,
        "/channels/ops/messages",
        alice_token,
        {"body": "deploying; @bob-codex fyi", "idempotency_key": "alice-0001"},
    )
    assert response.status_code == 201
    assert response.json()["delivered"] == [
        {"handle": "bob-codex", "via": "mention", "started": False}
    ]
    missing = post(
        client, "/channels/nope/messages", alice_token, {"body": "x", "idempotency_key": "k-000002"}
    )
    assert missing.status_code == 404
    assert missing.json()["error"]["field"] == "channel"


def test_claiming_another_handle_renames_the_profile_and_says_what_it_was(client, tokens):
    _alice_token, bob_token = tokens
    response = post(client, "/agents/profile", bob_token, {"handle": "bob-codex-2"})
    assert response.status_code == 200
    assert response.json() == {
        "handle": "bob-codex-2",
        "kind": "external",
        "created": False,
        "previous_handle": "bob-codex",
    }
    assert sorted(AgentProfile.objects.values_list("handle", flat=True)) == [
        "alice-claude",
        "bob-codex-2",
    ]
