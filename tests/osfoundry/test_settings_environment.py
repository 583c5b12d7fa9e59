"""Every deployment knob is an environment variable, and a bad value stops the process with a
message naming the variable (docs/configuration.md). Each case imports the settings in a fresh
process, as a server starting up would."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOW = (
    "import json, osfoundry.settings as s; print(json.dumps({"
    "'hosts': s.ALLOWED_HOSTS, 'csrf': s.CSRF_TRUSTED_ORIGINS, "
    "'proxy': getattr(s, 'SECURE_PROXY_SSL_HEADER', None), "
    "'forwarded_host': getattr(s, 'USE_X_FORWARDED_HOST', False), "
    "'secure_cookies': s.SESSION_COOKIE_SECURE, "
    "'cache': s.CACHES['default']['BACKEND'], "
    "'layer': s.CHANNEL_LAYERS['default']['BACKEND'], "
    "'engine': s.DATABASES['default']['ENGINE']}))"
)
# What a server's environment may set; each case starts from none of them.
KNOBS = (
    "DEBUG SECRET_KEY PUBLIC_ORIGIN ALLOWED_HOSTS CSRF_TRUSTED_ORIGINS BEHIND_TLS_PROXY "
    "USE_X_FORWARDED_HOST SECURE_COOKIES DATABASE_URL REDIS_URL EMAIL_BACKEND EMAIL_HOST "
    "EMAIL_PORT EMAIL_HOST_USER EMAIL_HOST_PASSWORD EMAIL_USE_TLS EMAIL_USE_SSL EMAIL_TIMEOUT"
).split()
MAILER = "import json, osfoundry.settings as s; print(json.dumps(s.MAILERS['default']))"


def settings_with(code: str = SHOW, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in KNOBS}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**base, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded(code: str = SHOW, **env) -> dict:
    result = settings_with(code, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def refused(**env) -> str:
    result = settings_with(**env)
    assert result.returncode != 0
    return result.stderr.strip().splitlines()[-1]


KEY = "k" * 40


def test_production_needs_a_secret_key():
    message = refused(DATABASE_URL="postgres://u@db:5432/rooms")
    assert message.endswith("SECRET_KEY must be set when DATABASE_URL is set.")


def test_a_short_secret_key_is_refused():
    assert refused(SECRET_KEY="short").endswith("SECRET_KEY must be at least 32 characters.")


def test_a_redis_url_of_another_kind_is_refused():
    message = refused(SECRET_KEY=KEY, REDIS_URL="http://cache:6379/0")
    assert message.endswith("REDIS_URL must start with redis://, rediss:// or unix://.")


def test_production_runs_on_postgresql_and_redis():
    found = loaded(
        SECRET_KEY=KEY,
        DATABASE_URL="postgres://u:p@db:5432/rooms",
        REDIS_URL="redis://cache:6379/1",
    )
    assert found["engine"] == "django.db.backends.postgresql"
    assert found["cache"] == "osfoundry.cache.ForgivingRedisCache"
    assert found["layer"] == "channels_redis.core.RedisChannelLayer"


def test_the_public_origin_sets_hosts_csrf_and_secure_cookies():
    found = loaded(SECRET_KEY=KEY, PUBLIC_ORIGIN="https://rooms.example.com")
    assert found["hosts"] == ["rooms.example.com"]
    assert found["csrf"] == ["https://rooms.example.com"]
    assert found["secure_cookies"] is True


def test_behind_a_tls_proxy_the_forwarded_scheme_is_trusted():
    found = loaded(
        SECRET_KEY=KEY,
        BEHIND_TLS_PROXY="1",
        USE_X_FORWARDED_HOST="yes",
        ALLOWED_HOSTS="rooms.internal, rooms.example.com",
    )
    assert found["proxy"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert found["forwarded_host"] is True
    assert found["secure_cookies"] is True
    assert found["hosts"] == ["rooms.internal", "rooms.example.com"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG='maybe' is not a boolean"),
        ("RATE_LIMIT", "lots", "RATE_LIMIT='lots' is not an integer."),
        ("PUBLIC_ORIGIN", "rooms.example.com", "must be an origin such as"),
    ],
)
def test_a_bad_value_stops_the_process_naming_the_variable(name, value, message):
    assert message in refused(SECRET_KEY=KEY, **{name: value})


def test_without_an_smtp_host_mail_is_printed():
    assert loaded(MAILER, SECRET_KEY=KEY) == {
        "BACKEND": "django.core.mail.backends.console.EmailBackend"
    }


def test_an_smtp_host_sends_mail_through_it_with_its_variables():
    mailer = loaded(
        MAILER,
        SECRET_KEY=KEY,
        EMAIL_HOST="smtp.example.com",
        EMAIL_PORT="465",
        EMAIL_HOST_USER="rooms",
        EMAIL_HOST_PASSWORD="app-password",
        EMAIL_USE_TLS="0",
        EMAIL_USE_SSL="1",
    )
    assert mailer == {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {
            "host": "smtp.example.com",
            "port": 465,
            "username": "rooms",
            "password": "app-password",
            "use_tls": False,
            "use_ssl": True,
            "timeout": 10,
        },
    }
