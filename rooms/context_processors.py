from .models import Proposal


def pending_approvals(request):
    """The count behind the navigation's "Needs your approval" badge."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"pending_count": Proposal.objects.pending().for_owner(user).count()}
