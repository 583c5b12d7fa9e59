"""osfoundry.hot_settings: the copies the lean routes read follow every setting change."""

from django.test import override_settings

from osfoundry.hot_settings import hot
from osfoundry.http import is_allowed_host


def test_a_changed_setting_is_what_the_lean_routes_read(settings):
    settings.RATE_LIMIT = 7
    settings.ALLOWED_HOSTS = ["rooms.example.com"]
    assert hot.RATE_LIMIT == 7
    assert hot.ALLOWED_HOSTS == ("rooms.example.com",)
    assert is_allowed_host("rooms.example.com") and not is_allowed_host("evil.example")


def test_the_copy_goes_back_when_an_override_ends():
    before = hot.PUBLIC_ORIGIN
    with override_settings(PUBLIC_ORIGIN="https://rooms.example.com"):
        assert hot.PUBLIC_ORIGIN == "https://rooms.example.com"
    assert hot.PUBLIC_ORIGIN == before
