"""Keys the embedded mode keeps beside its database, and the one production passes in."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from osfoundry import environment


@pytest.fixture
def var_in(tmp_path, monkeypatch):
    monkeypatch.setattr(environment, "BASE_DIR", tmp_path)
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.delenv("OIDC_PRIVATE_KEY", raising=False)
    return tmp_path / "var"


def test_the_embedded_secret_key_is_made_once_and_kept(var_in):
    first = environment.load_secret_key(debug=False, production=False)
    assert len(first) >= 50 and (var_in / "secret_key").read_text() == first
    assert (var_in / "secret_key").stat().st_mode & 0o777 == 0o600
    assert environment.load_secret_key(debug=False, production=False) == first


def test_production_needs_a_long_secret_key(var_in, monkeypatch):
    with pytest.raises(ImproperlyConfigured, match="must be set when DATABASE_URL is set"):
        environment.load_secret_key(debug=False, production=True)
    monkeypatch.setenv("SECRET_KEY", "short")
    with pytest.raises(ImproperlyConfigured, match="at least 32 characters"):
        environment.load_secret_key(debug=False, production=True)
    assert not var_in.exists()


def test_the_oidc_key_is_made_once_then_read(var_in):
    pem = environment.load_oidc_private_key()
    assert pem.startswith("-----BEGIN PRIVATE KEY-----")
    assert (var_in / "oidc_private_key.pem").stat().st_mode & 0o777 == 0o600
    assert environment.load_oidc_private_key() == pem
    assert [p.name for p in var_in.iterdir()] == ["oidc_private_key.pem"]  # no temporary left


def test_an_oidc_key_from_the_environment_wins(var_in, monkeypatch):
    monkeypatch.setenv("OIDC_PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----\\nabc\\n-----END")
    assert environment.load_oidc_private_key() == "-----BEGIN PRIVATE KEY-----\nabc\n-----END"
    assert not var_in.exists()
