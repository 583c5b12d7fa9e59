from django import template
from django.utils import timezone
from django.utils.timesince import timesince

from rooms.content.reveal import inline_text, plain_text

register = template.Library()


@register.filter
def ago(moment):
    """ "just now" for the first minute, then "5 minutes ago" and so on."""
    if not moment:
        return ""
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def bdi(text):
    """`{{ proposal.name|bdi }}`: a name or title isolated in <bdi>, its invisible and refused
    characters shown as ⟨U+…⟩ markers (rooms/content/reveal.py)."""
    return inline_text(str(text))


@register.filter
def plain(text):
    """`{{ room.name|plain }}`: for a <title> or an attribute: the same markers, as text."""
    return plain_text(str(text))
