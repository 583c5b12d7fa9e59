from django import template
from django.utils.html import format_html

from agents.connected import proposers
from rooms.content.reveal import inline_text

register = template.Library()


@register.simple_tag
def proposers_of(proposals):
    """`{% proposers_of page as names %}`: who proposed each of a list's proposals, read at
    once (three queries whatever the list's length), for `{% proposer p names %}`."""
    return proposers(proposals)


@register.simple_tag
def proposer(proposal, names=None):
    """`{% proposer proposal %}`: who proposed, as "bob-codex · Codex via OAuth": the agent's
    handle and its token's or client's name; the user name when the proposal came without a
    token (or the token and its agent are gone). `names`: from {% proposers_of %}."""
    who, via = (names or proposers([proposal]))[proposal.pk]
    if not via:
        return format_html('<span class="agent">{}</span>', inline_text(who))
    return format_html(
        '<span class="agent">{}</span><span class="via"> · {}</span>',
        inline_text(who),
        inline_text(via),
    )
