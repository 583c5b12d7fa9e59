"""Reading deployment settings from the environment (osfoundry/settings.py): each helper fails
loudly, naming the variable and what it expects, so a bad value stops the server at start-up."""

import os
import secrets
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool) -> bool:
    raw = env_str(name)
    if not raw:
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no.")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = env_str(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_renamed(name: str, old_name: str) -> str:
    """The variable `name`, or its old name for one release, with a warning to rename it."""
    if env_str(name) or not env_str(old_name):
        return name
    warnings.warn(
        f"{old_name} is renamed {name}; the old name still works in this release only.",
        FutureWarning,
        stacklevel=2,
    )
    return old_name


def env_list(name: str, default: list[str]) -> list[str]:
    raw = env_str(name)
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_origin(name: str) -> str:
    raw = env_str(name).rstrip("/")
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path:
        raise ImproperlyConfigured(
            f"{name}={raw!r} must be an origin such as https://rooms.example.com (no path)."
        )
    return raw


def database_from_url(url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme in {"postgres", "postgresql"}:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured("DATABASE_URL must name a database, e.g. .../osfoundry.")
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            # 0: Django's ASGI handler runs each request in a thread of its own, and a
            # persistent connection per thread would leak until PostgreSQL refuses clients.
            "CONN_MAX_AGE": env_int("CONN_MAX_AGE", 0),
            "CONN_HEALTH_CHECKS": True,
        }
    if parts.scheme == "sqlite":
        # sqlite:///relative/to/project or sqlite:////absolute/path
        path = url[len("sqlite:///") :]
        return sqlite_database(BASE_DIR / path if path else BASE_DIR / "var" / "db.sqlite3")
    raise ImproperlyConfigured(
        f"DATABASE_URL scheme {parts.scheme!r} is not supported; use postgres:// or sqlite:///."
    )


def sqlite_database(path: Path) -> dict:
    path.parent.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        # IMMEDIATE: a writer takes the lock when its transaction starts, so two concurrent
        # writers queue instead of failing with "database is locked" on upgrade.
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        "TEST": {"NAME": BASE_DIR / "var" / "test.sqlite3"},
    }


# channels_redis waits for a websocket's next message with BZPOPMIN blocking 5 s in Redis;
# redis-py 8 gives up reading after 5 s by default, so an idle feed's wait could time out just
# before Redis answered, and the consumer died with its websocket (seen in bench/soak.py).
CHANNEL_LAYER_READ_TIMEOUT_S = 15


def redis_channel_layer(url: str, prefix: str) -> dict:
    return {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [{"address": url, "socket_timeout": CHANNEL_LAYER_READ_TIMEOUT_S}],
            "prefix": prefix,
        },
    }


def load_secret_key(debug: bool, production: bool) -> str:
    key = env_str("SECRET_KEY")
    if key:
        if len(key) < 32 and not debug:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters.")
        return key
    if production:
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set.")
    # Embedded mode: keep a random key beside the SQLite database so sessions survive restarts.
    path = BASE_DIR / "var" / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def load_oidc_private_key() -> str:
    """The RSA key that signs ID tokens: OIDC_PRIVATE_KEY (PEM), else one kept in var/.

    Several hosts behind a load balancer must share one: set OIDC_PRIVATE_KEY there.
    """
    pem = os.environ.get("OIDC_PRIVATE_KEY", "").strip()
    if pem:
        return pem.replace("\\n", "\n")
    path = BASE_DIR / "var" / "oidc_private_key.pem"
    if not path.exists():
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}")
        temporary.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        temporary.chmod(0o600)
        # Several workers may start at once: the first complete file wins, atomically.
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
    return path.read_text()
