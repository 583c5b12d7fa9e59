from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from agents.conversations import delivery_report
from agents.mentions import mention_pattern, mentioned_handles

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


@register.filter
def with_mentions(body: str):
    """`{{ m.body|with_mentions }}`: the body, escaped, with each @mention the server's rule
    finds (agents/mentions.py) marked as the composer marks it."""
    spans = sorted(
        (match.start(), match.end(), handle)
        for handle in mentioned_handles(body)
        for match in mention_pattern(handle).finditer(body)
    )
    parts, at = [], 0
    for start, end, handle in spans:
        parts.append(escape(body[at:start]))
        parts.append(
            format_html('<mark class="mention" data-handle="{}">{}</mark>', handle, body[start:end])
        )
        at = end
    parts.append(escape(body[at:]))
    return mark_safe("".join(parts))  # every part is escaped above
