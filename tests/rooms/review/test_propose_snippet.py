import pytest

from osfoundry.errors import Invalid, NotFound, Unavailable
from rooms.events import PROPOSAL_CREATED
from rooms.models import Proposal, Room, RoomEvent
from rooms.services import propose_snippet


def propose(room, agent, files, key="key-00001", name="Standup timer"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    )


def test_a_valid_snippet_becomes_one_pending_proposal(room, agent, files):
    result = propose(room, agent, files)
    proposal = Proposal.objects.get()
    assert result.proposal == proposal
    assert proposal.status == Proposal.Status.PENDING
    assert proposal.files == files
    assert proposal.file_count == 2
    assert proposal.total_bytes == sum(len(t.encode()) for t in files.values())
    assert not room.apps.exists()
    event = RoomEvent.objects.get()
    assert (event.type, event.sequence) == (PROPOSAL_CREATED, 1)


def test_proposal_without_entry_is_refused(room, agent):
    with pytest.raises(Invalid) as error:
        propose(room, agent, {"src/main.tsx": "x"})
    assert error.value.message == "src/App.tsx missing"
    assert not Proposal.objects.exists()


def test_stranger_cannot_propose(room_factory, stranger, files):
    room = room_factory()
    with pytest.raises(NotFound):
        propose(room, stranger, files)


def test_local_room_is_unavailable(room_factory, agent, files):
    room = room_factory(kind=Room.Kind.LOCAL, members=[agent])
    with pytest.raises(Unavailable) as error:
        propose(room, agent, files)
    assert error.value.message == "Local Rooms are unavailable"


def test_binary_content_is_refused_with_a_clear_error(room, agent, files):
    # PostgreSQL's jsonb cannot store NUL or lone surrogates: refuse them on every database.
    expected = {
        "\x89PNG\x00": [
            "assets/logo.png:1:1: control character U+0089",
            "assets/logo.png:1:5: control character U+0000 (NULL)",
            "assets/logo.png: this looks like a binary file, and a snippet carries text files "
            "only: drop it, or put the app in a repository and use propose_room_repo_app",
        ],
        "bad \udc80 text": ["assets/logo.png:1:5: lone surrogate U+DC80 is not a character"],
    }
    for content, parts in expected.items():
        with pytest.raises(Invalid) as error:
            propose(room, agent, {**files, "assets/logo.png": content})
        assert all(part in error.value.message for part in parts), error.value.message
        assert error.value.field == "files.assets/logo.png"
    assert not Proposal.objects.exists()
