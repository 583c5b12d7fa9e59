import pytest

from agents.models import AccessToken
from agents.tokens import create_access_token, revoke_access_token
from osfoundry.auth import InsufficientScope, authenticate_bearer, bearer_from_header
from osfoundry.errors import Invalid


def test_token_is_stored_hashed_and_authenticates(agent):
    token, raw = create_access_token(user=agent, scopes="osfoundry:write osfoundry:read")
    assert raw.startswith("osf_") and raw not in token.token_hash
    principal = authenticate_bearer(raw)
    assert principal.user == agent and principal.kind == "pat"
    assert token.scopes == "osfoundry:read osfoundry:write"


def test_revoked_or_inactive_tokens_do_not_authenticate(agent):
    token, raw = create_access_token(user=agent, scopes="osfoundry:read")
    revoke_access_token(token=token)
    assert authenticate_bearer(raw) is None
    _, raw2 = create_access_token(user=agent, scopes="osfoundry:read")
    agent.is_active = False
    agent.save()
    assert authenticate_bearer(raw2) is None


def test_scope_check(agent):
    _, raw = create_access_token(user=agent, scopes="osfoundry:read")
    principal = authenticate_bearer(raw)
    principal.require("osfoundry:read")
    with pytest.raises(InsufficientScope):
        principal.require("osfoundry:write")


def test_unknown_scope_is_refused(agent):
    with pytest.raises(Invalid, match="scopes: osfoundry:admin not valid"):
        create_access_token(user=agent, scopes="osfoundry:admin")
    assert not AccessToken.objects.exists()


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("Basic abc", None),
        ("Bearer ", None),
        (None, None),
    ],
)
def test_bearer_header_parsing(header, token):
    assert bearer_from_header(header) == token


@pytest.mark.django_db(transaction=True)
def test_revoking_in_the_admin_ends_what_long_polls_remembered(admin_client, agent, monkeypatch):
    from agents.models import agent_key
    from agents.services import claim_connected_profile
    from osfoundry import wakeups
    from osfoundry.trust import ACCESS_KEY

    token, _raw = create_access_token(user=agent, scopes="osfoundry:read")
    profile = claim_connected_profile(
        user=agent, connection_key=f"pat:{token.pk}", handle="agent-one"
    ).profile
    notified = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: notified.append(keys))
    response = admin_client.post(
        "/admin/agents/accesstoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    # Every process forgets the tokens it checked, and the profile's waits check again.
    assert notified == [[ACCESS_KEY, agent_key(profile.pk)]]  # a wake-up without entries


def test_revoking_a_revoked_token_keeps_the_first_revocation(agent):
    token, raw = create_access_token(user=agent, scopes="osfoundry:read")
    revoke_access_token(token=token)
    first = AccessToken.objects.get(pk=token.pk).revoked_at
    again = AccessToken.objects.get(pk=token.pk)
    revoke_access_token(token=again)
    assert again.revoked_at == first
    assert AccessToken.objects.get(pk=token.pk).revoked_at == first
    assert authenticate_bearer(raw) is None
