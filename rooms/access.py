"""Who may see what: one access function per object, used by every interface.

Each raises NotFound for "missing" and "not yours" alike: a stranger learns nothing, not even
that an id exists. A token scoped to one project (osfoundry.auth.token_project_id) finds only
that project's Rooms, proposals and repositories: the others are "not found" exactly so.
"""

import uuid

from osfoundry.auth import AnyUser
from osfoundry.errors import Conflict, Invalid, NotFound, Unavailable
from osfoundry.schemas import MAX_PAGE

from .models import LauncherApp, Project, Proposal, Repository, RepositoryVersion, Room

LOCAL_ROOMS_UNAVAILABLE = "Local Rooms are unavailable"


def parse_uuid(value, *, field: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError):
        raise NotFound(f"{what} {value!r} not found", field=field) from None


def get_room_for_user(user: AnyUser, room_id, *, agent: bool = False) -> Room:
    """The Room if `user` owns it or is a member; NotFound for missing and not-yours alike.

    `agent=True` is for agent-facing operations, which never reach a local Room.
    """
    pk = parse_uuid(room_id, field="room_id", what="Room")
    room = Room.objects.visible_to(user).filter(pk=pk).select_related("project", "owner").first()
    if room is None:
        raise NotFound(
            f"Room {str(room_id)!r} not found; call list_rooms for the Room ids you can use",
            field="room_id",
        )
    if agent and room.is_local:
        raise Unavailable(LOCAL_ROOMS_UNAVAILABLE, code="local_room", field="room_id")
    return room


def get_proposal_for_user(user: AnyUser, proposal_id) -> Proposal:
    """The proposal for its Room's owner or its proposer. Members and strangers get NotFound:
    pending content is for the reviewer's eyes only."""
    pk = parse_uuid(proposal_id, field="proposal_id", what="Proposal")
    proposal = (
        Proposal.objects.readable_by(user)
        .select_related("room", "proposed_by", "decided_by", "app")
        .filter(pk=pk)
        .first()
    )
    if proposal is None:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    return proposal


def get_app_for_user(user: AnyUser, room_id, instance_id, *, agent: bool = False) -> LauncherApp:
    room = get_room_for_user(user, room_id, agent=agent)
    pk = parse_uuid(instance_id, field="instance_id", what="App")
    app = room.apps.select_related("proposal").filter(pk=pk).first()
    if app is None:
        raise NotFound(
            f"App {str(instance_id)!r} not found in this Room; call list_room_apps for its apps",
            field="instance_id",
        )
    return app


def get_repo_version_for_user(user: AnyUser, *, repository_id, version_id) -> RepositoryVersion:
    """A pinned version for members of its project and for owners of the project's Rooms (who
    review repo proposals); NotFound for everyone else."""
    repo_pk = parse_uuid(repository_id, field="repository_id", what="Repository")
    version_pk = parse_uuid(version_id, field="version_id", what="Version")
    version = (
        RepositoryVersion.objects.select_related("repository__project")
        .filter(pk=version_pk, repository__in=Repository.objects.readable_by(user))
        .filter(repository_id=repo_pk)
        .first()
    )
    if version is None:
        raise NotFound(f"Version {str(version_id)!r} not found", field="version_id")
    return version


def get_repository_for_user(user: AnyUser, repository_id) -> Repository:
    """A repository for members of its project and owners of its Rooms, within a token's
    project; NotFound for everyone else."""
    pk = parse_uuid(repository_id, field="repository_id", what="Repository")
    repository = Repository.objects.readable_by(user).select_related("project").filter(pk=pk)
    if (found := repository.first()) is None:
        raise NotFound(f"Repository {str(repository_id)!r} not found", field="repository_id")
    return found


def get_pending_proposal_for_owner(*, owner: AnyUser, proposal_id) -> Proposal:
    """A pending proposal, for its Room's owner only: the owner's preview of unapproved code.

    Members, strangers and even the proposer get NotFound (an unreviewed snippet never runs in
    anyone else's session); a decided proposal is a Conflict that says where it went.
    """
    pk = parse_uuid(proposal_id, field="proposal_id", what="Proposal")
    proposal = (
        Proposal.objects.readable_by(owner)
        .for_owner(owner)
        .select_related("room", "repository_version")
        .filter(pk=pk)
        .first()
    )
    if proposal is None:
        raise NotFound(f"Proposal {str(proposal_id)!r} not found", field="proposal_id")
    if not proposal.is_pending:
        where = (
            "open it from the Room launcher" if proposal.status == "approved" else "nothing runs"
        )
        raise Conflict(
            f"This proposal was already {proposal.status}; {where}", code="already_decided"
        )
    return proposal


def get_version_in_project(
    project: Project, repository_id: str, version_id: str
) -> RepositoryVersion:
    """A pinned version of a repository of `project`, as a repo proposal must name."""
    repo_pk = parse_uuid(repository_id, field="repository_id", what="Repository")
    version_pk = parse_uuid(version_id, field="version_id", what="Version")
    version = (
        RepositoryVersion.objects.select_related("repository")
        .filter(pk=version_pk, repository__project=project)
        .first()
    )
    if version is None:
        raise NotFound(
            f"Version {str(version_id)!r} not found in a repository of this Room's project",
            field="version_id",
        )
    if version.repository_id != repo_pk:
        raise Invalid(
            f"version_id: version {str(version_id)!r} belongs to repository "
            f"{str(version.repository_id)!r}, not {str(repository_id)!r}",
            field="version_id",
        )
    return version


# Reads shared by the API, the MCP tools and the console


def list_rooms(user: AnyUser) -> list[dict]:
    rooms = Room.objects.visible_to(user).select_related("project", "owner")
    return [room.as_dict() for room in rooms]


def list_room_apps(
    user: AnyUser, room_id, *, limit: int = MAX_PAGE, agent: bool = False
) -> list[dict]:
    room = get_room_for_user(user, room_id, agent=agent)
    apps = room.apps.filter(position__isnull=False).select_related("proposal")
    apps = apps.order_by("position")[:limit]
    return [app.as_dict() for app in apps]
