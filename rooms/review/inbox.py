"""What the owner's inbox reads: pending and recently decided proposals, filtered by Room or agent.

Reads only; deciding lives in rooms/services.py. A filter naming a Room the person does not own
or an agent that never proposed to them is refused with a message, never a 500.
"""

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator

from ..models import Proposal, Room

RECENTLY_DECIDED = 20
# Pending proposals per inbox page: a Room agents fill with thousands stays one quick page.
PENDING_PAGE = 50
DECIDED = [
    Proposal.Status.APPROVED,
    Proposal.Status.DECLINED,
    Proposal.Status.CHANGES_REQUESTED,
]


@dataclass
class InboxFilters:
    room: Room | None = None
    agent: str = ""
    errors: list[str] = field(default_factory=list)
    rooms: list[Room] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)

    @property
    def is_active(self) -> bool:
        return self.room is not None or bool(self.agent)


def read_filters(owner, params) -> InboxFilters:
    """The filters in `params` (a QueryDict), checked against what `owner` has."""
    filters = InboxFilters(
        rooms=list(Room.objects.filter(owner=owner).order_by("name")),
        agents=sorted(
            get_user_model()
            .objects.filter(proposals__room__owner=owner)
            .values_list("username", flat=True)
            .distinct()
        ),
    )
    room_id = params.get("room", "")
    if room_id:
        filters.room = next((r for r in filters.rooms if str(r.pk) == room_id), None)
        if filters.room is None:
            filters.errors.append("No Room of yours matches that Room filter; showing all Rooms.")
    agent = params.get("agent", "")
    if agent:
        if agent in filters.agents:
            filters.agent = agent
        else:
            filters.errors.append(
                "No agent has proposed to your Rooms under that name; showing all agents."
            )
    return filters


def owner_proposals(owner, filters: InboxFilters):
    proposals = Proposal.objects.for_owner(owner).select_related(
        "room", "proposed_by", "decided_by"
    )
    if filters.room is not None:
        proposals = proposals.filter(room=filters.room)
    if filters.agent:
        proposals = proposals.filter(proposed_by__username=filters.agent)
    return proposals


def pending_for(owner, filters: InboxFilters):
    return owner_proposals(owner, filters).pending().order_by("-created_at", "-pk")


def pending_page(owner, filters: InboxFilters, number) -> Page:
    """One page of the pending proposals, newest first; a page number that is not one gives
    the first page, one past the end the last."""
    return Paginator(pending_for(owner, filters), PENDING_PAGE).get_page(number)


def recently_decided_for(owner, filters: InboxFilters) -> list[Proposal]:
    decided = owner_proposals(owner, filters).filter(status__in=DECIDED)
    return list(decided.order_by("-decided_at")[:RECENTLY_DECIDED])
