import uuid
from typing import TYPE_CHECKING, TypeGuard

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from osfoundry.auth import token_project_id
from osfoundry.idempotency import IdempotencyKey

# Repositories' and packages' models live in their own modules; imported here for Django.
from .packagemodels import NpmPackage, PackageBundle  # noqa: F401
from .repomodels import GitObject, GitRef, Repository, RepositoryVersion  # noqa: F401
from .taskmodels import ProposalTask  # noqa: F401
from .verdictmodels import StoredVerdict

if TYPE_CHECKING:
    from osfoundry.auth import AnyUser, User

# A proposal's and an app's name (the tab title).
APP_NAME_MAX_CHARS = 200


class ProjectQuerySet(models.QuerySet):
    def readable_by(self, user: "AnyUser") -> "ProjectQuerySet":
        """The projects whose repositories `user` may read: those it is a member of, and those
        with a Room it owns (an owner reviews their versions), within its token's project."""
        if not user.is_authenticated:
            return self.none()
        projects = self.filter(Q(members=user) | Q(rooms__owner=user)).distinct()
        scope = token_project_id(user)
        return projects if scope is None else projects.filter(pk=scope)


class Project(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="projects", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class RoomQuerySet(models.QuerySet):
    def visible_to(self, user: "AnyUser") -> "RoomQuerySet":
        """The Rooms `user` owns or belongs to, within its token's project if it has one
        (rooms.live.remembered_rooms.KnownRoom.readable_by keeps the same rule for its memory)."""
        if not user.is_authenticated:
            return self.none()
        rooms = self.filter(Q(owner=user) | Q(members=user)).distinct()
        scope = token_project_id(user)
        return rooms if scope is None else rooms.filter(project_id=scope)


class Room(models.Model):
    class Kind(models.TextChoices):
        CLOUD = "cloud", "Cloud"
        LOCAL = "local", "Local"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rooms")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.CLOUD)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_rooms"
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="member_rooms", blank=True
    )
    # The last Room event's sequence; bumped under the row lock when an event is appended.
    last_event_sequence = models.PositiveBigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RoomQuerySet.as_manager()

    class Meta:
        ordering = ["project__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="room_name_unique_in_project")
        ]

    def __str__(self):
        return self.name

    @property
    def is_local(self) -> bool:
        return self.kind == self.Kind.LOCAL

    def is_owned_by(self, user: "AnyUser") -> TypeGuard["User"]:
        return user.is_authenticated and self.owner_id == user.pk

    def as_dict(self) -> dict:
        """The Room as agents read it (reads project and owner)."""
        return {
            "room_id": str(self.pk),
            "name": self.name,
            "kind": self.kind,
            "project": self.project.name,
            "project_id": str(self.project_id),
            "owner": self.owner.get_username(),
            "available": not self.is_local,
        }


class ProposalQuerySet(models.QuerySet):
    def pending(self) -> "ProposalQuerySet":
        return self.filter(status=Proposal.Status.PENDING)

    def for_owner(self, owner: "AnyUser") -> "ProposalQuerySet":
        """The proposals to the Rooms `owner` owns: what the owner reviews."""
        return self.filter(room__owner=owner) if owner.is_authenticated else self.none()

    def readable_by(self, user: "AnyUser") -> "ProposalQuerySet":
        """The proposals `user` may read: to the Rooms it owns, and its own, within its token's
        project. Members and strangers read none: pending content is for the reviewer's eyes."""
        if not user.is_authenticated:
            return self.none()
        proposals = self.filter(Q(room__owner=user) | Q(proposed_by=user))
        scope = token_project_id(user)
        return proposals if scope is None else proposals.filter(room__project_id=scope)

    def pending_twin(self, *, room: "Room", caller: "User", content_hash: str) -> "Proposal | None":
        """The pending card of `caller` in `room` with this content, if there is one: the same
        content proposed again collapses onto it (one_pending_card_per_content)."""
        return (
            self.pending().filter(room=room, proposed_by=caller, content_hash=content_hash).first()
        )


class Proposal(StoredVerdict):
    """What an agent proposes to a Room. A snippet proposal stores the verdict on its files
    (StoredVerdict); a proposal of a repository version reads its version's."""

    class Kind(models.TextChoices):
        SNIPPET = "snippet", "Snippet"
        REPO = "repo", "Repository version"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved"
        DECLINED = "declined", "Declined"
        # The owner asked for changes line by line; the proposer answers with a revision.
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        # A later revision of the same line of work took this one's place on the card.
        SUPERSEDED = "superseded", "Superseded"
        # Its proposer took it back before the owner decided (tasks/cancel of its task).
        WITHDRAWN = "withdrawn", "Withdrawn"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="proposals")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=APP_NAME_MAX_CHARS)
    files = models.JSONField(default=dict, blank=True)  # snippet only: path -> text
    repository_version = models.ForeignKey(
        RepositoryVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # sha256 of what the owner reviews (kind, name, files or version): a decision binds to it.
    content_hash = models.CharField(max_length=64)
    file_count = models.PositiveIntegerField(default=0)
    total_bytes = models.PositiveBigIntegerField(default=0)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="proposals"
    )
    proposed_via = models.CharField(max_length=100, blank=True)  # the token's connection key
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    # An update names the app it updates and the revision it was proposed against; a new app's
    # proposal gets its app when approved.
    app = models.ForeignKey(
        "LauncherApp", on_delete=models.CASCADE, null=True, blank=True, related_name="proposals"
    )
    base_revision = models.PositiveIntegerField(null=True, blank=True)
    # A revision continues its line of work: one card, its revisions listed.
    previous = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="next"
    )
    iteration = models.PositiveIntegerField(default=1)
    # The npm packages the app brings from the registry, resolved when proposed (the lock,
    # rooms/registry/lock.py; {} for none), and the module table its frame runs: both bound
    # into content_hash, never resolved again.
    packages = models.JSONField(default=dict, blank=True)
    package_bundle = models.ForeignKey(
        PackageBundle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="decided_proposals",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # The owner's words with the decision: why they declined, or the summary of their request for
    # changes (whose line comments are ReviewComments).
    decline_reason = models.CharField(max_length=1000, blank=True)
    changes_summary = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProposalQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Identical content from the same caller to the same Room collapses into one
            # pending card, even when the caller makes a fresh idempotency key per retry.
            models.UniqueConstraint(
                fields=["room", "proposed_by", "content_hash"],
                condition=Q(status="pending"),
                name="one_pending_card_per_content",
            ),
            models.CheckConstraint(
                condition=Q(kind="snippet", repository_version__isnull=True)
                | Q(kind="repo", repository_version__isnull=False),
                name="proposal_kind_matches_content",
            ),
        ]
        indexes = [models.Index(fields=["room", "status"])]

    def __str__(self):
        return f"{self.name} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        """The review card in the owner's console."""
        return reverse("rooms:proposal", args=[self.pk])

    @property
    def is_pending(self) -> bool:
        return self.status == self.Status.PENDING

    @property
    def is_update(self) -> bool:
        return self.base_revision is not None

    def as_dict(self) -> dict:
        """The proposal's status, for its proposer and the Room owner (never its files)."""
        return {
            "proposal_id": str(self.pk),
            "room_id": str(self.room_id),
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "content_hash": self.content_hash,
            "file_count": self.file_count,
            "total_bytes": self.total_bytes,
            "created_at": self.created_at.isoformat(),
            "decided_by": self.decided_by.get_username() if self.decided_by else None,
            "decided_at": self.decided_at.isoformat() if self.decided_at else None,
            "decline_reason": self.decline_reason or None,
            "changes_summary": self.changes_summary or None,
            "instance_id": str(self.app_id) if self.app_id else None,
            "base_revision": self.base_revision,
            "revision": self.iteration,
            "previous_proposal_id": str(self.previous_id) if self.previous_id else None,
        }


class ProposalKey(IdempotencyKey):
    """An idempotency key a caller used for one proposal operation. Several keys may point at one
    proposal (a fresh-key retry collapsed onto a pending card); the constraint makes races safe."""

    target = "proposal"

    caller = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="keys")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["caller", "operation", "key"], name="idempotency_key_unique_per_caller"
            )
        ]

    @classmethod
    def expired(cls, cutoff):
        # A key still pointing at a pending proposal is kept: a client may still be retrying.
        return super().expired(cutoff).exclude(proposal__status=Proposal.Status.PENDING)


class LauncherApp(models.Model):
    """A tab in a Room's launcher; created only by approving a proposal."""

    class BuildState(models.TextChoices):
        # A snippet has no server build: its state is the check it passed when proposed.
        READY = "ready", "Ready"

    instance_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="apps")
    # The proposal whose content the tab runs now (its current revision's).
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="+")
    name = models.CharField(max_length=APP_NAME_MAX_CHARS)
    revision = models.PositiveIntegerField(default=1)
    # None while the tab is removed from the launcher (its history stays; it can be restored).
    position = models.PositiveIntegerField(null=True, blank=True)
    removed_at = models.DateTimeField(null=True, blank=True)
    build_state = models.CharField(max_length=10, choices=BuildState.choices, blank=True)
    build_detail = models.CharField(max_length=500, blank=True)
    build_updated_at = models.DateTimeField(null=True, blank=True)
    build_updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["room", "position"]
        constraints = [
            models.UniqueConstraint(fields=["room", "position"], name="tab_position_unique")
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self) -> str:
        """The tab's address: the Room page with this app open."""
        return reverse("rooms:app", args=[self.room_id, self.pk])

    @property
    def is_removed(self) -> bool:
        return self.position is None

    def as_dict(self) -> dict:
        """The safe launcher entry: never files, config, logs, secrets or stored data."""
        return {
            "instance_id": str(self.pk),
            "name": self.name,
            "position": self.position,
            "kind": self.proposal.kind,
            "revision": self.revision,
            "proposal_id": str(self.proposal_id),
            "removed": self.is_removed,
            "created_at": self.created_at.isoformat(),
            "build": {
                "state": self.build_state or None,
                "detail": self.build_detail or None,
                "updated_at": self.build_updated_at.isoformat() if self.build_updated_at else None,
            },
        }


class AppRevision(models.Model):
    """One revision of a launcher app: approved content, or a rollback to an earlier one."""

    app = models.ForeignKey(LauncherApp, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="+")
    name = models.CharField(max_length=APP_NAME_MAX_CHARS)
    content_hash = models.CharField(max_length=64)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    # Set when this revision is a rollback: the earlier revision whose content it restores.
    rolled_back_to = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["app", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["app", "number"], name="app_revision_number_unique")
        ]

    def __str__(self):
        return f"{self.name} v{self.number}"


class ReviewComment(models.Model):
    """An owner's comment on lines of one file of a proposal, sent with "Request changes"."""

    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    path = models.CharField(max_length=1000)
    line_start = models.PositiveIntegerField()
    line_end = models.PositiveIntegerField()
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["proposal", "path", "line_start", "created_at"]

    def __str__(self):
        return f"{self.path}:{self.line_start}"


class RoomEvent(models.Model):
    """Append-only, per-Room sequence."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="events")
    sequence = models.PositiveBigIntegerField()
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["room", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["room", "sequence"], name="event_sequence_unique")
        ]

    def __str__(self):
        return f"{self.type} #{self.sequence}"

    def as_dict(self) -> dict:
        return {
            "sequence": self.sequence,
            "type": self.type,
            "room_id": str(self.room_id),
            "created_at": self.created_at.isoformat(),
            **self.payload,
        }
