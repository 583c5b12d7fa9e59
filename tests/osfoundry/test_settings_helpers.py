import pytest
from django.core.exceptions import ImproperlyConfigured

from osfoundry import settings as s


@pytest.mark.parametrize(("raw", "value"), [("1", True), ("yes", True), ("off", False), ("", None)])
def test_env_bool(monkeypatch, raw, value):
    monkeypatch.setenv("X_FLAG", raw)
    assert s.env_bool("X_FLAG", None) is value


def test_env_bool_fails_loudly(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG='maybe' is not a boolean"):
        s.env_bool("X_FLAG", False)


def test_env_int_fails_loudly(monkeypatch):
    monkeypatch.setenv("X_INT", "ten")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        s.env_int("X_INT", 1)
    monkeypatch.setenv("X_INT", "-1")
    with pytest.raises(ImproperlyConfigured, match="at least 0"):
        s.env_int("X_INT", 1)


def test_origin_must_be_an_origin(monkeypatch):
    monkeypatch.setenv("X_ORIGIN", "https://rooms.example.com/")
    assert s.env_origin("X_ORIGIN") == "https://rooms.example.com"
    monkeypatch.setenv("X_ORIGIN", "rooms.example.com")
    with pytest.raises(ImproperlyConfigured, match="must be an origin"):
        s.env_origin("X_ORIGIN")


def test_database_url_parsing():
    db = s.database_from_url("postgres://u:p%40ss@db.internal:6543/rooms")
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "rooms",
        "u",
        "p@ss",
        "db.internal",
        "6543",
    )
    with pytest.raises(ImproperlyConfigured, match="not supported"):
        s.database_from_url("mysql://x/y")
    with pytest.raises(ImproperlyConfigured, match="must name a database"):
        s.database_from_url("postgres://host/")


def test_secret_key_is_required_in_production(monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set"):
        s.load_secret_key(False, True)
    monkeypatch.setenv("SECRET_KEY", "short")
    with pytest.raises(ImproperlyConfigured, match="at least 32"):
        s.load_secret_key(False, True)


def test_a_renamed_variable_reads_its_old_name_with_a_warning(monkeypatch):
    monkeypatch.delenv("X_NEW", raising=False)
    monkeypatch.setenv("X_OLD", "3")
    with pytest.warns(FutureWarning, match="X_OLD is renamed X_NEW"):
        assert s.env_int(s.env_renamed("X_NEW", "X_OLD"), 8) == 3
    monkeypatch.setenv("X_NEW", "5")
    assert s.env_int(s.env_renamed("X_NEW", "X_OLD"), 8) == 5
