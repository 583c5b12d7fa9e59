from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from osfoundry.errors import NotFound

from . import services
from .models import Proposal, Room


@login_required
def inbox(request):
    pending = (
        Proposal.objects.pending()
        .filter(room__owner=request.user)
        .select_related("room", "proposed_by")
        .order_by("-created_at")
    )
    rooms = Room.objects.visible_to(request.user).select_related("project", "owner")
    return render(request, "rooms/inbox.html", {"pending": pending, "rooms": rooms})


@login_required
def room_detail(request, room_id):
    try:
        room = services.get_room_for_user(request.user, room_id)
    except NotFound:
        raise Http404("Room not found") from None
    apps = room.apps.select_related("proposal").order_by("position")
    return render(request, "rooms/room.html", {"room": room, "apps": apps})
