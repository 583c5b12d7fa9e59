"""osFoundry Rooms settings: one file, every deployment knob from the environment. Defaults give
the embedded mode (SQLite, in-memory channel layer, one process). Production sets DATABASE_URL,
REDIS_URL, SECRET_KEY, ALLOWED_HOSTS and PUBLIC_ORIGIN; see .env.example."""

import os
import secrets
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

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


DATABASE_URL = env_str("DATABASE_URL")
REDIS_URL = env_str("REDIS_URL")
REDIS_PREFIX = env_str("REDIS_PREFIX", "osfoundry")
IS_PRODUCTION = bool(DATABASE_URL) and not DATABASE_URL.startswith("sqlite")

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = load_secret_key(DEBUG, IS_PRODUCTION)
PUBLIC_ORIGIN = env_origin("PUBLIC_ORIGIN")
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS",
    [urlsplit(PUBLIC_ORIGIN).hostname or ""]
    if PUBLIC_ORIGIN
    else ["127.0.0.1", "localhost", "[::1]"],
)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [PUBLIC_ORIGIN] if PUBLIC_ORIGIN else [])

# Behind a TLS-terminating proxy (nginx, a load balancer): trust its X-Forwarded-Proto.
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
if BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", False)
SECURE_COOKIES = env_bool("SECURE_COOKIES", BEHIND_TLS_PROXY or PUBLIC_ORIGIN.startswith("https"))
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Every page: our own files only, no inline script, no plugin, no <base>, forms to us alone.
# The owner approves code here, so a script from anywhere else could approve for them. Pages
# that need more say so themselves: the app frame sends its own, stricter policy
# (rooms/runtime_views.py); the OAuth consent page adds its client's callback to form-action
# (osfoundry/oauth.py).
SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "frame-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "ninja",  # its static files: the API docs' Swagger UI
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "allauth.idp.oidc",
    "osfoundry",
    "rooms",
    "agents",
    "notifications",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before the session: a refused API call costs a counter, not a session read.
    "osfoundry.api_auth.RestRateLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

# Bearer tokens, asked in order (osfoundry/auth.py): personal access tokens, then OAuth.
BEARER_TOKEN_BACKENDS = [
    "agents.tokens.authenticate_personal_token",
    "agents.consent.authenticate_oauth_token",  # osfoundry.oauth's, confined to a project
]

# The modules whose TOOLS the MCP endpoint publishes, in this order (osfoundry/mcp/tooling.py).
MCP_TOOL_MODULES = ["rooms.tools", "agents.tools"]

ROOT_URLCONF = "osfoundry.urls"
ASGI_APPLICATION = "osfoundry.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "rooms.context_processors.pending_approvals",
            ],
        },
    },
]

if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {"default": sqlite_database(BASE_DIR / "var" / "db.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

if REDIS_URL:
    if urlsplit(REDIS_URL).scheme not in {"redis", "rediss", "unix"}:
        raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://.")
    CHANNEL_LAYERS = {"default": redis_channel_layer(REDIS_URL, REDIS_PREFIX)}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Tests and `runserver` without collectstatic: serve static files by their plain names.
if not env_bool("STATIC_MANIFEST", True):
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    WHITENOISE_USE_FINDERS = True

LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "rooms:inbox"
LOGOUT_REDIRECT_URL = "account_login"

# django-allauth: members are added by admins; sign-up stays closed unless SIGNUP_OPEN=1.
SIGNUP_OPEN = env_bool("SIGNUP_OPEN", False)
ACCOUNT_ADAPTER = "rooms.adapters.AccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip,5/5m/key"}
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]

# allauth's identity provider is the OAuth authorization server for MCP clients
# (osfoundry/oauth.py): open dynamic client registration, PKCE, tokens bound to the MCP endpoint.
IDP_OIDC_ADAPTER = "osfoundry.oauth.OAuthAdapter"
IDP_OIDC_DCR_ENABLED = True
IDP_OIDC_DCR_REQUIRES_INITIAL_ACCESS_TOKEN = False
IDP_OIDC_ACCESS_TOKEN_EXPIRES_IN = env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600, minimum=60)
IDP_OIDC_PRIVATE_KEY = load_oidc_private_key()
IDP_OIDC_RATE_LIMITS = {"client_registration": env_str("OAUTH_REGISTRATION_RATE", "30/m/ip")}

# Email (proposal batches, notifications/services.py): the console backend prints mail in the
# embedded mode; with EMAIL_HOST set, SMTP is the default backend.
SMTP_HOST = env_str("EMAIL_HOST", "")
SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
MAIL_BACKEND = env_str("EMAIL_BACKEND") or (
    SMTP_BACKEND if SMTP_HOST else "django.core.mail.backends.console.EmailBackend"
)
MAILERS: dict[str, dict] = {"default": {"BACKEND": MAIL_BACKEND}}
if MAIL_BACKEND == SMTP_BACKEND:
    MAILERS["default"]["OPTIONS"] = {
        "host": SMTP_HOST or "localhost",
        "port": env_int("EMAIL_PORT", 587, minimum=1),
        "username": env_str("EMAIL_HOST_USER", ""),
        "password": env_str("EMAIL_HOST_PASSWORD", ""),
        "use_tls": env_bool("EMAIL_USE_TLS", True),
        "use_ssl": env_bool("EMAIL_USE_SSL", False),
        "timeout": env_int("EMAIL_TIMEOUT", 10, minimum=1),
    }
# How often each process looks for proposal emails that are due (0: never; then run
# `manage.py send_proposal_emails` from cron). At most one email per owner per 10 minutes.
PROPOSAL_EMAIL_POLL_SECONDS = env_int("PROPOSAL_EMAIL_POLL_SECONDS", 30)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "osfoundry@localhost")

CACHES: dict[str, dict] = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "osfoundry.cache.ForgivingRedisCache",  # Redis down: a miss, not a 500
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": REDIS_PREFIX,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    "loggers": {"dulwich": {"level": "WARNING"}},  # not each git request's capabilities
}

# Product limits (documented in README "Limits").
SNIPPET_MAX_FILES = env_int("SNIPPET_MAX_FILES", 64, minimum=1)
SNIPPET_MAX_FILE_BYTES = env_int("SNIPPET_MAX_FILE_BYTES", 200_000, minimum=1)
SNIPPET_MAX_TOTAL_BYTES = env_int("SNIPPET_MAX_TOTAL_BYTES", 1_000_000, minimum=1)
IDEMPOTENCY_KEY_DAYS = env_int("IDEMPOTENCY_KEY_DAYS", 30, minimum=1)
# JSON escaping can double a file's size on the wire; anything bigger is refused unread.
DATA_UPLOAD_MAX_MEMORY_SIZE = SNIPPET_MAX_TOTAL_BYTES * 2 + 256 * 1024

# One budget per token (else per client address) for REST, its long-poll and MCP together
# (osfoundry/ratelimit.py); MCP_RATE_LIMIT/MCP_RATE_WINDOW, the old names, work this release.
RATE_LIMIT = env_int(env_renamed("RATE_LIMIT", "MCP_RATE_LIMIT"), 2000, minimum=1)  # calls
RATE_WINDOW = env_int(env_renamed("RATE_WINDOW", "MCP_RATE_WINDOW"), 60, minimum=1)  # seconds

# The async routes' database threads per process (osfoundry/dbthreads.py: MCP, the long-poll).
DATABASE_THREADS = env_int(env_renamed("DATABASE_THREADS", "MCP_DATABASE_THREADS"), 8, minimum=1)
DATABASE_THREAD_CONN_MAX_AGE = env_int(
    env_renamed("DATABASE_THREAD_CONN_MAX_AGE", "MCP_CONN_MAX_AGE"), 300
)

# Threads per process serving git (rooms/gitserver.py): one, with a connection, per push/clone.
GIT_THREADS = env_int("GIT_THREADS", 10, minimum=1)
