from django import template

from rooms import highlight as highlighting

register = template.Library()


@register.filter
def highlight(text, path):
    """`{{ text|highlight:path }}`: the one highlighting helper, for templates."""
    return highlighting.highlight(text, path)
