"""Proposal emails: at most one per owner per 10 minutes, listing what arrived since the last.

Nothing here runs in a request. A background thread per process (notifications/mailer.py) or
`manage.py send_proposal_emails` calls `send_due_emails`; it reads only committed Room events,
so a proposal is emailed only once it exists. The batching state is a row per person
(NotificationSettings): a worker claims a batch by a conditional update on its claim_version,
so with several workers exactly one sends each batch. The email goes out after the claim,
outside any transaction; when sending fails the claim is undone and the next round retries.
A failing mail server therefore never touches a proposal.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db.models import F, Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from agents.connected import proposers
from rooms.events import PROPOSAL_CREATED
from rooms.models import Proposal, Room, RoomEvent

from .models import NotificationSettings

logger = logging.getLogger(__name__)

BATCH_INTERVAL = timedelta(minutes=10)


def settings_for(person) -> NotificationSettings:
    state, _created = NotificationSettings.objects.get_or_create(person=person)
    return state


def set_email_notifications(*, person, is_enabled: bool) -> NotificationSettings:
    state = settings_for(person)
    NotificationSettings.objects.filter(pk=state.pk).update(is_email_enabled=is_enabled)
    state.refresh_from_db()
    return state


def send_due_emails(*, now: datetime | None = None) -> int:
    """Send every owner's batch that is due; returns how many emails went out."""
    now = now or timezone.now()
    owners = Room.objects.filter(last_event_sequence__gt=0).values_list("owner_id", flat=True)
    people = get_user_model().objects.filter(pk__in=set(owners)).order_by("pk")
    return sum(send_batch_if_due(owner=owner, now=now) for owner in people)


def send_batch_if_due(*, owner, now: datetime) -> bool:
    state = settings_for(owner)
    if state.email_sent_at and now - state.email_sent_at < BATCH_INTERVAL:
        return False
    cursors = dict(
        (str(pk), sequence)
        for pk, sequence in Room.objects.filter(owner=owner).values_list(
            "pk", "last_event_sequence"
        )
    )
    if all(state.email_cursors.get(room) == seq for room, seq in cursors.items()):
        return False
    proposals = new_pending_proposals(old=state.email_cursors, new=cursors)
    will_send = bool(proposals) and state.is_email_enabled and bool(owner.email)
    claimed = NotificationSettings.objects.filter(
        pk=state.pk, claim_version=state.claim_version
    ).update(
        claim_version=F("claim_version") + 1,
        email_cursors=cursors,
        email_sent_at=now if will_send else state.email_sent_at,
    )
    if claimed != 1 or not will_send:
        return False  # Another worker took this batch, or there is nothing to send.
    try:
        batch_email(owner, proposals).send()
    except Exception:
        logger.exception("proposal email to %s failed; retrying next round", owner.pk)
        NotificationSettings.objects.filter(
            pk=state.pk, claim_version=state.claim_version + 1
        ).update(
            claim_version=F("claim_version") + 1,
            email_cursors=state.email_cursors,
            email_sent_at=state.email_sent_at,
        )
        return False
    return True


def new_pending_proposals(*, old: dict, new: dict) -> list[Proposal]:
    """Proposals created in the Rooms between the two cursors and still waiting."""
    window = Q(pk__in=[])
    for room_id, sequence in new.items():
        window |= Q(room_id=room_id, sequence__gt=old.get(room_id, 0), sequence__lte=sequence)
    ids = [
        event.payload.get("proposal_id")
        for event in RoomEvent.objects.filter(window, type=PROPOSAL_CREATED)
    ]
    return list(
        Proposal.objects.pending()
        .filter(pk__in=[i for i in ids if i])
        .select_related("room", "proposed_by")
        .order_by("created_at")
    )


def batch_email(owner, proposals: list[Proposal]) -> EmailMessage:
    origin = settings.PUBLIC_ORIGIN or "http://127.0.0.1:8000"
    if len(proposals) == 1:
        # One line whatever the name holds: a header cannot carry a line break.
        subject = f"“{' '.join(proposals[0].name.split())}” needs your approval"
    else:
        subject = f"{len(proposals)} proposals need your approval"
    who = proposers(proposals)
    body = render_to_string(
        "notifications/new_proposals.txt",
        {
            "owner": owner,
            "items": [
                (p, origin + p.get_absolute_url(), " · ".join(filter(None, who[p.pk])))
                for p in proposals
            ],
            "settings_url": origin + reverse("notifications:settings"),
        },
    )
    return EmailMessage(subject=subject, body=body, to=[owner.email])
