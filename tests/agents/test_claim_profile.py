import pytest

from agents.models import AgentProfile
from agents.services import claim_connected_profile
from osfoundry.errors import Conflict, Invalid


def claim(user, handle, connection="pat:1"):
    return claim_connected_profile(user=user, connection_key=connection, handle=handle)


@pytest.mark.parametrize(
    "handle",
    ["alice-claude", "ab", "7x", "a" * 31, "x-", "0-0", "codex-2"],
)
def test_valid_handles_are_claimed(agent, handle):
    result = claim(agent, handle)
    assert result.created
    assert AgentProfile.objects.get().handle == handle


@pytest.mark.parametrize(
    ("handle", "problem"),
    [
        ("a", "1 characters; use 2–31 characters"),
        ("", "0 characters; use 2–31 characters"),
        ("a" * 32, "32 characters; use 2–31 characters"),
        ("Alice", "use lowercase only, e.g. 'alice'"),
        ("-alice", "must start with a lowercase letter or a digit"),
        ("alice_claude", "only lowercase letters, digits and hyphens; remove '_'"),
        ("alice claude", "only lowercase letters, digits and hyphens; remove ' '"),
        ("a.b_c", "only lowercase letters, digits and hyphens; remove '.', '_'"),
        ("alåce", "only lowercase letters, digits and hyphens; remove 'å'"),
        ("ålice", "must start with a lowercase letter or a digit"),
    ],
)
def test_invalid_handles_are_refused_with_the_fix(agent, handle, problem):
    with pytest.raises(Invalid) as error:
        claim(agent, handle)
    assert error.value.message == f"handle: {problem}"
    assert error.value.field == "handle"
    assert not AgentProfile.objects.exists()


@pytest.mark.parametrize("handle", ["maestro", "direct", "all", "everyone", "here", "channel"])
def test_reserved_handles_are_refused(agent, handle):
    with pytest.raises(Invalid) as error:
        claim(agent, handle)
    assert "is reserved" in error.value.message
    assert not AgentProfile.objects.exists()


def test_a_taken_handle_is_refused(agent, member):
    claim(agent, "bob-codex", connection="pat:1")
    with pytest.raises(Conflict) as error:
        claim(member, "bob-codex", connection="pat:2")
    assert error.value.code == "handle_taken"
    assert "bob-codex-2" in error.value.message
    assert AgentProfile.objects.count() == 1


def test_claiming_the_same_handle_again_is_a_no_op(agent):
    first = claim(agent, "bob-codex")
    again = claim(agent, "bob-codex")
    assert again.profile.pk == first.profile.pk
    assert not again.created
    assert AgentProfile.objects.count() == 1


def test_a_connection_renames_its_profile_and_frees_the_old_handle(agent, member):
    first = claim(agent, "bob-codex")
    renamed = claim(agent, "bob-codex-2")
    assert renamed.previous_handle == "bob-codex"
    first.profile.refresh_from_db()
    assert first.profile.handle == "bob-codex-2"
    assert claim(member, "bob-codex", connection="pat:2").created


def test_each_connection_of_one_user_gets_its_own_profile(agent):
    claim(agent, "agent-claude", connection="pat:1")
    claim(agent, "agent-codex", connection="pat:2")
    assert set(AgentProfile.objects.values_list("handle", flat=True)) == {
        "agent-claude",
        "agent-codex",
    }


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_claims_of_one_handle_give_it_to_one(agent, member):
    import threading

    from django.db import connection

    barrier = threading.Barrier(2)
    outcomes = {}

    def claim(user, key):
        try:
            barrier.wait(5)
            outcomes[key] = claim_connected_profile(
                user=user, connection_key=key, handle="popular"
            ).created
        except Conflict as error:
            outcomes[key] = error.code
        finally:
            connection.close()

    threads = [
        threading.Thread(target=claim, args=(agent, "pat:one")),
        threading.Thread(target=claim, args=(member, "pat:two")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(outcomes.values(), key=str) == sorted([True, "handle_taken"], key=str)
    assert list(AgentProfile.objects.values_list("handle", flat=True)) == ["popular"]


@pytest.mark.django_db(transaction=True)
def test_one_connections_concurrent_first_claims_both_get_its_profile(agent):
    """A client that retries its claim before the first answer arrives: whichever claim
    creates the profile, the other returns it (not "handle taken" by itself)."""
    import threading

    from django.db import connection

    barrier = threading.Barrier(2)
    outcomes = []

    def claim_once():
        try:
            barrier.wait(5)
            result = claim_connected_profile(user=agent, connection_key="pat:one", handle="popular")
            outcomes.append((result.profile.pk, result.created))
        except Conflict as error:
            outcomes.append(error.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim_once) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    profile = AgentProfile.objects.get()
    assert (profile.handle, profile.connection_key) == ("popular", "pat:one")
    assert sorted(outcomes, key=str) == [(profile.pk, False), (profile.pk, True)]
