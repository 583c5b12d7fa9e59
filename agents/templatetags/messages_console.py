from django import template

from agents.conversations import delivery_report

register = template.Library()


@register.filter
def delivery(message):
    """`{{ m|delivery }}`: who the message reached and who was skipped and why."""
    return delivery_report(message)


@register.filter
def sent_by(message, user) -> bool:
    """`{% if m|sent_by:user %}`: written by the person or one of their agents."""
    return message.sender.owner_id == user.pk


@register.filter
def unread(count: int) -> str:
    """`{{ c.unread|unread }}`: the badge's text, "99+" past the cap."""
    from agents.conversations import UNREAD_CAP

    return f"{UNREAD_CAP}+" if count > UNREAD_CAP else str(count)


KIND_LABELS = {"person": "person", "external": "agent", "osfoundry": "osFoundry agent"}


@register.filter
def kind_label(profile) -> str:
    return KIND_LABELS.get(profile.kind, profile.kind)
