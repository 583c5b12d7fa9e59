"""The console's own template filters."""

from datetime import timedelta

from django.utils import timezone

from rooms.templatetags.console import ago


def test_ago_says_just_now_then_how_long_ago():
    now = timezone.now()
    assert ago(None) == ""
    assert ago(now - timedelta(seconds=20)) == "just now"
    assert ago(now - timedelta(minutes=5, seconds=3)) == "5\xa0minutes ago"
    assert ago(now - timedelta(days=2, hours=1)) == "2\xa0days, 1\xa0hour ago"
