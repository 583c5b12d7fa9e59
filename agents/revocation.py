"""Every way an agent's access can end ends its long-polls at once, in every worker.

A parked wait checked access when it started, and an idle re-poll trusts what this process
remembered (agents.idle). Whatever ends access sends a wake-up without entries to the agents
concerned: each parked wait then checks access again (inbox.reopen_inbox) and answers 401 or 404
when it ended, and every process forgets what it vouched for, so the next re-poll reads the
database, and forgets the tokens it checked (osfoundry.trust). The ways: a token revoked,
re-scoped, given an expiry or deleted (personal or OAuth); its user deactivated or deleted; a
profile deleted; its person removed from a project (whose channels its agents then leave).

Signals, not one service, because the admin, scripts on the ORM and allauth all write these rows:
this module hears its own models (tokens, profiles); a person saved and a project's members
changed are heard once in rooms.live.changes, which calls the reactions here with the others.
QuerySet.update() sends none: a long-poll still checks its token and person against the database
when it parks and before it hands over what a wake-up carried (agents.inbox), so what that skips
is one parked wait's empty answer; a call that ends at once may trust osfoundry.trust's memory.
"""

from allauth.idp.oidc.models import Token as OAuthToken
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from osfoundry import wakeups
from osfoundry.oauth import grant_key
from osfoundry.trust import ACCESS_KEY
from rooms.live import changes

from . import services
from .models import AccessToken, AgentProfile, agent_key
from .tokens import connection_key


def access_keys(profile_ids) -> list[str]:
    """The wake-up that makes every process forget the tokens it checked (osfoundry.trust),
    then wakes the profiles' long-polls without entries: "check access again"."""
    return [ACCESS_KEY, *(agent_key(pk) for pk in profile_ids)]


def wake_profiles(profile_ids) -> None:
    keys = access_keys(profile_ids)
    transaction.on_commit(lambda: wakeups.notify(keys))


def wake_connection(key: str) -> None:
    wake_profiles(AgentProfile.objects.filter(connection_key=key).values_list("pk", flat=True))


@receiver(post_save, sender=AccessToken, dispatch_uid="agents.token_saved")
@receiver(post_delete, sender=AccessToken, dispatch_uid="agents.token_deleted")
def personal_token_changed(sender, instance: AccessToken, **kwargs) -> None:
    wake_connection(connection_key(instance))


@receiver(post_save, sender=OAuthToken, dispatch_uid="agents.oauth_token_saved")
@receiver(post_delete, sender=OAuthToken, dispatch_uid="agents.oauth_token_deleted")
def oauth_token_changed(sender, instance: OAuthToken, **kwargs) -> None:
    if instance.type == OAuthToken.Type.ACCESS_TOKEN and instance.user_id:
        wake_connection(grant_key(instance.client_id, instance.user_id))


@changes.person_saved.react
def person_saved(instance, **_details) -> list[str]:
    # Every save forgets the tokens checked: a principal carries its user (osfoundry.trust).
    if instance.is_active:
        return access_keys([])
    return access_keys(AgentProfile.objects.filter(owner=instance).values_list("pk", flat=True))


@receiver(post_delete, sender=AgentProfile, dispatch_uid="agents.profile_deleted")
def profile_deleted(sender, instance: AgentProfile, **kwargs) -> None:
    wake_profiles([instance.pk])  # a user deleted deletes their profiles: this covers it


@changes.project_members.react
def project_members_changed(instance, action, reverse, pk_set, **_details) -> list[str] | None:
    if action == "post_remove":
        removed = pk_set or set()
    elif action == "pre_clear":
        removed = set(
            (instance.projects if reverse else instance.members).values_list("pk", flat=True)
        )
    else:
        return None
    project_ids, user_ids = (removed, [instance.pk]) if reverse else ([instance.pk], removed)
    return access_keys(services.leave_project_channels(project_ids=project_ids, user_ids=user_ids))
