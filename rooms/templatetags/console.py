import html

from django import template
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
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


@register.simple_tag
def launcher_tabs(tabs, room_url: str) -> SafeString:
    """The Room's tab bar: a link per app (rooms.launcher.views.room_detail's `tabs` rows),
    written here rather than in a template loop, so a Room of a thousand apps draws it in a
    few ms."""
    base = escape(room_url)
    links = []
    for tab in tabs:
        pk = str(tab.instance_id)
        links.append(
            f'\n    <a role="tab" class="tab" href="{base}apps/{pk}/" aria-selected="false" '
            f'tabindex="-1" data-instance-id="{pk}" data-position="{tab.position:d}" '
            f'data-revision="{tab.revision:d}" data-build-state="{html.escape(tab.build_state)}">'
            f"{inline_text(tab.name)}</a>"
        )
    return mark_safe("".join(links))  # noqa: S308 - every value escaped or a number
