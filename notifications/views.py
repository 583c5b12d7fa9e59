"""The notifications settings page: proposal emails (stored) and desktop notifications (this
browser's choice, kept by static/rooms/notify.js)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from . import services


@require_http_methods(["GET", "POST"])
@login_required
def notification_settings(request):
    if request.method == "POST":
        choice = request.POST.get("email", "")
        if choice not in ("on", "off"):
            state = services.settings_for(request.user)
            context = {"state": state, "error": "Choose whether to get proposal emails."}
            return render(request, "notifications/settings.html", context, status=400)
        services.set_email_notifications(person=request.user, is_enabled=choice == "on")
        messages.success(
            request,
            "Proposal emails are on." if choice == "on" else "Proposal emails are off.",
        )
        return redirect("notifications:settings")
    state = services.settings_for(request.user)
    return render(request, "notifications/settings.html", {"state": state})
