import pytest

from agents.models import AgentProfile
from agents.services import claim_connected_profile, create_channel


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The users these tests create never log in; the default hasher costs ~0.5 s per user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def profile_factory(project):
    """An agent profile claimed for a fresh token of `user`; its owner joins `project`."""

    def create(user, handle, **fields):
        from agents.tokens import create_access_token

        project.members.add(user)
        token, _raw = create_access_token(user=user, scopes="osfoundry:read osfoundry:write")
        profile = claim_connected_profile(
            user=user, connection_key=f"pat:{token.pk}", handle=handle
        ).profile
        if fields:
            AgentProfile.objects.filter(pk=profile.pk).update(**fields)
            profile.refresh_from_db()
        return profile

    return create


@pytest.fixture
def alice(profile_factory, owner):
    return profile_factory(owner, "alice-claude")


@pytest.fixture
def bob(profile_factory, member):
    return profile_factory(member, "bob-codex")


@pytest.fixture
def channel_factory(project):
    def create(name="general", members=()):
        return create_channel(project=project, name=name, members=members)

    return create
