"""Agents on the network: claiming a handle (one profile per connection), who can reach whom,
and channels. Sending is in agents/sending.py, receiving in agents/inbox.py, tokens in
agents/tokens.py; every interface (MCP tools, REST, the long-poll route, the admin) calls these.
"""

import re
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from osfoundry.auth import User
from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound
from rooms.models import Project

from .models import AgentProfile, Channel
from .tokens import connection_projects

# ---------------------------------------------------------------------------------------------
# Profiles

HANDLE_PATTERN = r"^[a-z0-9][a-z0-9-]{1,30}$"
RESERVED_HANDLES = ("maestro", "direct", "all", "everyone", "here", "channel")
_HANDLE_RE = re.compile(HANDLE_PATTERN)


def handle_problem(handle: str) -> str | None:
    """Why `handle` cannot be claimed, or None; each answer says how to fix it."""
    if not 2 <= len(handle) <= 31:
        return f"{len(handle)} characters; use 2–31 characters"
    if handle != handle.lower():
        return f"use lowercase only, e.g. {handle.lower()!r}"
    if not re.match(r"[a-z0-9]", handle):
        return "must start with a lowercase letter or a digit"
    if not _HANDLE_RE.fullmatch(handle):  # match: `$` would let a last newline in
        bad = sorted({ch for ch in handle if not re.match(r"[a-z0-9-]", ch)})
        return f"only lowercase letters, digits and hyphens; remove {', '.join(map(repr, bad))}"
    if handle in RESERVED_HANDLES:
        return f"{handle!r} is reserved ({', '.join(RESERVED_HANDLES)}); pick another"
    return None


@dataclass(frozen=True)
class ClaimResult:
    profile: AgentProfile
    created: bool = False
    previous_handle: str | None = None  # set when this connection renamed its profile

    def as_dict(self) -> dict:
        data = {"handle": self.profile.handle, "kind": self.profile.kind, "created": self.created}
        if self.previous_handle:
            data["previous_handle"] = self.previous_handle
        return data


def claim_connected_profile(
    *,
    user: User,
    connection_key: str,
    handle: str,
    kind: str = AgentProfile.Kind.EXTERNAL,
) -> ClaimResult:
    """Claim `handle` for the caller's connection (one profile per token, or a person's own,
    agents/conversations.py); claiming again with another handle renames the profile and frees
    the old handle."""
    problem = handle_problem(handle)
    if problem:
        raise Invalid(f"handle: {problem}", code="invalid_handle", field="handle")
    current = AgentProfile.objects.filter(connection_key=connection_key).first()
    if current is not None and current.handle == handle:
        return ClaimResult(current)
    # Another connection's profile: this connection's own may be one a concurrent claim of
    # it made since `current` was read (the create below then finds it).
    taken = AgentProfile.objects.filter(handle=handle).exclude(connection_key=connection_key)
    if taken.exists():
        raise handle_taken(handle)
    try:
        with transaction.atomic():
            if current is None:
                profile = AgentProfile.objects.create(
                    handle=handle, owner=user, connection_key=connection_key, kind=kind
                )
                return ClaimResult(profile, created=True)
            previous = current.handle
            AgentProfile.objects.filter(pk=current.pk).update(handle=handle)
    except IntegrityError:
        # A concurrent claim won the unique handle (or this connection's first claim).
        current = AgentProfile.objects.filter(connection_key=connection_key).first()
        if current is not None and current.handle == handle:
            return ClaimResult(current)
        raise handle_taken(handle) from None
    current.handle = handle
    return ClaimResult(current, previous_handle=previous)


def handle_taken(handle: str) -> Conflict:
    return Conflict(
        f"handle: {handle!r} is already taken; pick another, e.g. {handle[:29]}-2",
        code="handle_taken",
        field="handle",
    )


def get_connected_profile(*, connection_key: str) -> AgentProfile:
    found = next(iter(AgentProfile.objects.filter(connection_key=connection_key)[:1]), None)
    if found is None:
        raise NotFound(
            "This connection has no handle yet: call claim_connected_profile first",
            code="no_profile",
        )
    return found


def profiles_visible_to(profile: AgentProfile) -> QuerySet[AgentProfile]:
    """Profiles `profile` may address: its owner's agents and those of people it shares a
    project with. Others do not exist as far as it can tell."""
    projects = Project.objects.filter(members=profile.owner_id)
    return AgentProfile.objects.filter(
        Q(owner_id=profile.owner_id) | Q(owner__projects__in=projects)
    ).distinct()


# ---------------------------------------------------------------------------------------------
# Channels (admins create them; members are agents whose owners belong to the project)


@transaction.atomic
def create_channel(*, project: Project, name: str, members=()) -> Channel:
    channel = Channel.objects.create(project=project, name=name)
    set_channel_members(channel=channel, profiles=members)
    return channel


def add_channel_member(*, channel: Channel, profile: AgentProfile) -> None:
    check_channel_members(project=channel.project, profiles=[profile])
    channel.members.add(profile)


@transaction.atomic
def set_channel_members(*, channel: Channel, profiles) -> None:
    """Make `profiles` exactly the channel's members (the admin's form)."""
    profiles = list(profiles)
    check_channel_members(project=channel.project, profiles=profiles)
    channel.members.set(profiles)


def leave_project_channels(*, project_ids, user_ids) -> list[int]:
    """People left projects: their agents leave those projects' channels (whose members' owners
    belong to the project). Returns the ids of the agents concerned."""
    profile_ids = list(
        AgentProfile.objects.filter(owner_id__in=user_ids).values_list("pk", flat=True)
    )
    Channel.members.through.objects.filter(
        channel__project_id__in=project_ids, agentprofile_id__in=profile_ids
    ).delete()
    return profile_ids


def check_channel_members(*, project: Project, profiles) -> None:
    """A channel's members are agents whose owners belong to its project."""
    members = set(project.members.values_list("pk", flat=True))
    outsiders = [profile.handle for profile in profiles if profile.owner_id not in members]
    if outsiders:
        owners = ", ".join(f"{handle}'s owner" for handle in outsiders)
        raise Forbidden(
            f"{owners} {'is' if len(outsiders) == 1 else 'are'} not a member of project "
            f"{project.name!r}; add them to the project first"
        )
    confined = connection_projects(profile.connection_key for profile in profiles)
    elsewhere = [
        profile.handle
        for profile in profiles
        if confined.get(profile.connection_key or "", project.pk) != project.pk
    ]
    if elsewhere:
        raise Forbidden(
            f"{', '.join(elsewhere)}: its token may act only in another project; a channel of "
            f"{project.name!r} needs an agent whose token reaches it"
        )
