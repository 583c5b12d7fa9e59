import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from osfoundry.idempotency import IdempotencyKey


def agent_key(profile_id) -> str:
    """The wake-up key of a profile's inbox (osfoundry.wakeups)."""
    return f"agent:{profile_id}"


class AccessTokenQuerySet(models.QuerySet):
    def active(self):
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class AccessToken(models.Model):
    """A personal access token for an agent or a script. Only its sha256 is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_tokens"
    )
    name = models.CharField(max_length=200, blank=True)
    prefix = models.CharField(max_length=16, help_text="The first characters, to recognise it.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    scopes = models.CharField(max_length=200, help_text="Space-separated scopes.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The one project it may act in; blank: every project of its person. Deleting the project
    # deletes the token rather than widening it.
    project = models.ForeignKey(
        "rooms.Project",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="access_tokens",
    )

    objects = AccessTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.prefix}… ({self.user})"

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())

    @property
    def is_active(self) -> bool:
        if self.revoked_at:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class AgentProfile(models.Model):
    """An agent's handle on the message network.

    One profile per connection: `connection_key` is the principal's stable token key
    ("pat:<id>", later "oauth:<grant>"), so Claude Code and Codex run by one person, each with
    its own token, are two agents with two handles. A connection claims once and may rename.
    """

    class Kind(models.TextChoices):
        EXTERNAL = "external", "External (pulls with wait_for_messages)"
        OSFOUNDRY = "osfoundry", "osFoundry (a run starts when addressed in `to`)"
        PERSON = "person", "A person (writes from the console's Messages)"

    handle = models.CharField(max_length=31, unique=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_profiles"
    )
    connection_key = models.CharField(max_length=100, unique=True, null=True, blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.EXTERNAL)
    # An admin's switch, not presence: off, the agent is skipped as "not reachable" whatever it
    # does. Whether it is listening now is `listening_until` (agents/presence.py).
    is_reachable = models.BooleanField(
        default=True,
        help_text=(
            "Off: every message to it is skipped as not reachable. This is not presence: the "
            "console shows whether the agent is listening (a wait_for_messages in the last minute)."
        ),
    )
    # An osFoundry agent of another person starts a run for a channel message only if it agreed.
    accepts_replies_in_channels = models.BooleanField(default=False)
    # The last inbox sequence handed out; bumped under the row lock when a message lands.
    last_inbox_sequence = models.PositiveBigIntegerField(default=0, editable=False)
    # The highest sequence in a response that was completely written (resume point).
    last_delivered_sequence = models.PositiveBigIntegerField(default=0, editable=False)
    # When the latest wait_for_messages it parked ends (or ended): presence, agents/presence.py.
    listening_until = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["handle"]

    def __str__(self):
        return self.handle

    @property
    def is_osfoundry(self) -> bool:
        return self.kind == self.Kind.OSFOUNDRY

    @property
    def is_person(self) -> bool:
        return self.kind == self.Kind.PERSON


class Channel(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey("rooms.Project", on_delete=models.CASCADE, related_name="channels")
    name = models.SlugField(max_length=80)
    members = models.ManyToManyField(AgentProfile, related_name="channels", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project__name", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="channel_name_unique_in_project"
            )
        ]

    def __str__(self):
        return f"#{self.name}"


class Message(models.Model):
    """A message, direct (channel is null) or in a channel. Immutable."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    sender = models.ForeignKey(AgentProfile, on_delete=models.CASCADE, related_name="sent")
    channel = models.ForeignKey(
        Channel, on_delete=models.CASCADE, null=True, blank=True, related_name="messages"
    )
    thread_root = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replies"
    )
    to_handles = models.JSONField(default=list, blank=True)  # as addressed in `to`, normalised
    # Who was not reached and why, as the send result said; replays return it again.
    skipped = models.JSONField(default=list, blank=True)
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at"]

    def __str__(self):
        return f"{self.sender} → {', '.join(self.to_handles) or self.channel or '-'}"


class InboxEntry(models.Model):
    """One message as it reached one recipient, numbered in that recipient's own sequence."""

    class Via(models.TextChoices):
        TO = "to", "Addressed in `to`"
        MENTION = "mention", "@mentioned in the body"

    recipient = models.ForeignKey(AgentProfile, on_delete=models.CASCADE, related_name="inbox")
    sequence = models.PositiveBigIntegerField()
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="deliveries")
    via = models.CharField(max_length=10, choices=Via.choices)
    # True only for an osFoundry agent addressed in `to` with permission: its run starts.
    starts_run = models.BooleanField(default=False)

    class Meta:
        ordering = ["recipient", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["recipient", "sequence"], name="inbox_sequence_unique"),
            models.UniqueConstraint(fields=["recipient", "message"], name="inbox_message_once"),
        ]

    def __str__(self):
        return f"{self.recipient} #{self.sequence}"

    def as_dict(self) -> dict:
        """The entry as wait_for_messages returns it (reads message.sender and .channel)."""
        message = self.message
        data = {
            "sequence": self.sequence,
            "message_id": str(message.pk),
            "from": message.sender.handle,
            "via": self.via,
            "to": message.to_handles,
            "body": message.body,
            "thread_root_id": str(message.thread_root_id or message.pk),
            "created_at": message.created_at.isoformat(),
        }
        if message.channel is not None:
            data["channel"] = {"id": str(message.channel_id), "name": message.channel.name}
        if self.starts_run:
            data["started"] = True
        return data


class MessageKey(IdempotencyKey):
    """An idempotency key a sender used for one send operation; the constraint makes
    concurrent retries collapse into one message. Kept IDEMPOTENCY_KEY_DAYS."""

    target = "message"

    sender = models.ForeignKey(AgentProfile, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="keys")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["sender", "operation", "key"], name="message_key_unique_per_sender"
            )
        ]


class ReadMark(models.Model):
    """How far a person has read one conversation of the console's Messages: a channel
    ("channel:<id>") or a direct thread ("thread:<root id>")."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="read_marks"
    )
    conversation = models.CharField(max_length=80)
    read_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "conversation"], name="read_mark_unique")
        ]

    def __str__(self):
        return f"{self.user} read {self.conversation}"


class ClientGrant(models.Model):
    """What osFoundry keeps of a person's grant to an OAuth client beside allauth's tokens: the
    project chosen on the consent page and when the client last used a token. Confined with no
    project: its project was deleted, and the client reaches nothing (a grant never widens)."""

    client = models.ForeignKey(
        "allauth_idp_oidc.Client", on_delete=models.CASCADE, related_name="+"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    is_confined = models.BooleanField(default=False)
    project = models.ForeignKey(
        "rooms.Project", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "user"], name="one_grant_per_client_and_user")
        ]

    def __str__(self):
        return f"{self.client_id} for {self.user_id}"
