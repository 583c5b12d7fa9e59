from django.conf import settings
from django.urls import reverse
from ninja import Query, Router, Schema, Status

from osfoundry.api_auth import bearer, principal_with
from osfoundry.auth import READ, WRITE
from osfoundry.schemas import MAX_PAGE, PageLimit, Sequence

from . import access, events, services
from .access import get_app_for_user, get_room_for_user
from .git import repositories
from .review import revisions
from .schemas import RepoProposalIn, SnippetProposalIn, UpdateProposalIn

router = Router(tags=["rooms"], auth=bearer)

# What to do after proposing, in this interface's terms: the REST routes to wait with.
WAIT_FOR_APPROVAL = (
    "The proposal is pending: nothing is in the Room until its owner approves it. Cheapest way "
    "to wait: end your turn and ask the owner to review it at review_url (or under "
    '"Connected → Needs your approval"), then read GET /api/v1/proposals/{proposal_id} once; '
    "if the owner requested changes, POST a revision to /api/v1/proposals/{proposal_id}/"
    "revisions. Only if you have other work, poll it (or GET "
    "/api/v1/rooms/{room_id}/events?after_sequence=N) with capped backoff (10 s doubling to 5 min)."
)


class LimitQuery(Schema):
    limit: PageLimit = MAX_PAGE


class EventsQuery(Schema):
    after_sequence: Sequence = 0
    limit: PageLimit = MAX_PAGE


@router.get("/rooms", summary="List the Rooms you can reach")
def list_rooms(request):
    principal = principal_with(request, READ)
    return {"rooms": access.list_rooms(principal.user)}


@router.get("/rooms/{room_id}", summary="Read a Room")
def read_room(request, room_id: str):
    principal = principal_with(request, READ)
    room = get_room_for_user(principal.user, room_id, agent=True)
    return room.as_dict()


@router.get("/rooms/{room_id}/apps", summary="List a Room's launcher apps in tab order")
def list_room_apps(request, room_id: str, query: Query[LimitQuery]):
    principal = principal_with(request, READ)
    apps = access.list_room_apps(principal.user, room_id, limit=query.limit, agent=True)
    return {"apps": apps}


@router.get("/rooms/{room_id}/repositories", summary="The Room's project repositories")
def list_room_repositories(request, room_id: str):
    principal = principal_with(request, READ)
    origin = absolute(request, "/").rstrip("/")
    return {
        "repositories": repositories.list_room_repositories(principal.user, room_id, origin=origin)
    }


@router.get(
    "/rooms/{room_id}/apps/{instance_id}", summary="An app's launcher entry and build state"
)
def read_app_status(request, room_id: str, instance_id: str):
    principal = principal_with(request, READ)
    app = get_app_for_user(principal.user, room_id, instance_id, agent=True)
    return services.app_status(app)


@router.post(
    "/rooms/{room_id}/proposals/snippet",
    summary="Propose a snippet app",
    response={200: dict, 201: dict},
)
def propose_snippet(request, room_id: str, payload: SnippetProposalIn):
    principal = principal_with(request, WRITE)
    result = services.propose_snippet(
        caller=principal.user,
        room_id=room_id,
        name=payload.name,
        files=payload.files,
        idempotency_key=payload.idempotency_key,
    )
    return proposal_response(request, result)


@router.post(
    "/rooms/{room_id}/proposals/repo",
    summary="Propose a pinned repository version",
    response={200: dict, 201: dict},
)
def propose_repo_version(request, room_id: str, payload: RepoProposalIn):
    principal = principal_with(request, WRITE)
    result = services.propose_repo_version(
        caller=principal.user,
        room_id=room_id,
        name=payload.name,
        repository_id=payload.repository_id,
        version_id=payload.version_id,
        idempotency_key=payload.idempotency_key,
    )
    return proposal_response(request, result)


def review_url(request, proposal) -> str:
    """The card's absolute URL, for the agent to give its person: on PUBLIC_ORIGIN when set."""
    return absolute(request, proposal.get_absolute_url())


def absolute(request, path: str) -> str:
    return (
        settings.PUBLIC_ORIGIN + path
        if settings.PUBLIC_ORIGIN
        else request.build_absolute_uri(path)
    )


def proposal_response(request, result: services.ProposalResult) -> Status:
    data = result.as_dict()
    data["review_url"] = review_url(request, result.proposal)
    if result.proposal.is_pending:
        data["next_step"] = WAIT_FOR_APPROVAL.format(
            proposal_id=data["proposal_id"], room_id=data["room_id"]
        )
    return Status(201 if result.is_new else 200, data)


@router.post(
    "/rooms/{room_id}/apps/{instance_id}/updates",
    summary="Propose new files for an approved snippet app",
    response={200: dict, 201: dict},
)
def propose_update(request, room_id: str, instance_id: str, payload: UpdateProposalIn):
    principal = principal_with(request, WRITE)
    result = revisions.propose_update(
        caller=principal.user,
        room_id=room_id,
        instance_id=instance_id,
        name=payload.name,
        files=payload.files,
        idempotency_key=payload.idempotency_key,
    )
    return proposal_response(request, result)


@router.post(
    "/proposals/{proposal_id}/revisions",
    summary="Send a new revision of your proposal",
    response={200: dict, 201: dict},
)
def revise_proposal(request, proposal_id: str, payload: UpdateProposalIn):
    principal = principal_with(request, WRITE)
    result = revisions.revise_proposal(
        caller=principal.user,
        proposal_id=proposal_id,
        name=payload.name,
        files=payload.files,
        idempotency_key=payload.idempotency_key,
    )
    return proposal_response(request, result)


@router.get(
    "/proposals/{proposal_id}",
    summary="A proposal's review: status, decision, line comments, revisions",
)
def read_proposal(request, proposal_id: str):
    principal = principal_with(request, READ)
    data = revisions.read_proposal(principal.user, proposal_id)
    path = reverse("rooms:proposal", args=[data["proposal_id"]])
    return {**data, "review_url": absolute(request, path)}


@router.get("/rooms/{room_id}/events", summary="Room events after a sequence")
def room_events(request, room_id: str, query: Query[EventsQuery]):
    principal = principal_with(request, READ)
    return events.room_events_after(
        principal.user,
        room_id,
        after_sequence=query.after_sequence,
        limit=query.limit,
        agent=True,
    )
