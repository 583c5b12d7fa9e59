from .models import Proposal

# The navigation's items (templates/base.html), by the URL names of the pages under each: the
# item of the page being shown is marked aria-current.
NAV_SECTIONS = {
    "rooms": {"rooms:rooms", "rooms:room", "rooms:app", "rooms:revisions", "rooms:revision"},
    "inbox": {"rooms:inbox", "rooms:proposal", "rooms:version"},
    "messages": {"agents:messages", "agents:channel", "agents:thread"},
    "tokens": {"agents:tokens"},
    "clients": {"agents:clients"},
    "agents": {"agents:agents"},
}


def pending_approvals(request):
    """The count behind the navigation's "Needs your approval" badge, and which item of the
    navigation the page is under."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    match = getattr(request, "resolver_match", None)
    view = match.view_name if match else ""
    section = next((name for name, views in NAV_SECTIONS.items() if view in views), "")
    return {
        "pending_count": Proposal.objects.pending().for_owner(user).count(),
        "nav_section": section,
    }
