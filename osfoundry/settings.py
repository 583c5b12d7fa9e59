"""osFoundry Rooms settings: one file, every deployment knob from the environment. Defaults give
the embedded mode (SQLite, in-memory channel layer, one process). Production sets DATABASE_URL,
REDIS_URL, SECRET_KEY, ALLOWED_HOSTS and PUBLIC_ORIGIN; see .env.example."""

from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from osfoundry.environment import (  # noqa: F401 - also read by tests
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_origin,
    env_renamed,
    env_str,
    load_oidc_private_key,
    load_secret_key,
    redis_channel_layer,
    sqlite_database,
)

BASE_DIR = Path(__file__).resolve().parent.parent


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
# (rooms/runtime/views.py); the OAuth consent page adds its client's callback to form-action
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
    # Innermost: a view's database outage becomes a 503 before any other middleware sees it.
    "osfoundry.outage.OutageMiddleware",
]

# Bearer tokens, asked in order (osfoundry/auth.py): personal access tokens, then OAuth.
BEARER_TOKEN_BACKENDS = [
    "agents.tokens.authenticate_personal_token",
    "agents.consent.authenticate_oauth_token",  # osfoundry.oauth's, confined to a project
]

# The agent handle a connection key acts under, for who-proposed lines (osfoundry/auth.py).
CONNECTION_HANDLE_LOOKUP = "agents.connected.handle_of_connection"

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
IDP_OIDC_RATE_LIMITS = {
    "client_registration": env_str("OAUTH_REGISTRATION_RATE", "30/m/ip"),
    # Fetches of client ID metadata documents (a cached document costs nothing).
    "cimd_fetch": env_str("OAUTH_CLIENT_METADATA_FETCH_RATE", "10/m/ip"),
}
# Client ID Metadata Documents (osfoundry/oauth_documents.py): a client ID that is an https URL
# names a document describing the client, fetched from public addresses only, within a time and
# a size (osfoundry/oauth_fetch.py). allauth's own support stays off: it checks no address.
IDP_OIDC_CIMD_ENABLED = False
OAUTH_CLIENT_METADATA_DOCUMENTS = env_bool("OAUTH_CLIENT_METADATA_DOCUMENTS", True)
OAUTH_CLIENT_METADATA_FETCH_SECONDS = 5.0  # in all, DNS included
OAUTH_CLIENT_METADATA_MAX_BYTES = 5 * 1024  # the draft recommends 5 kilobytes
# For tests' own document servers only, so never read from the environment: documents served
# from 127.0.0.1 or ::1. Every other address that is not public stays refused.
OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK = False

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

# Product limits (documented in docs/proposals.md and docs/configuration.md).
SNIPPET_MAX_FILES = env_int("SNIPPET_MAX_FILES", 64, minimum=1)
SNIPPET_MAX_FILE_BYTES = env_int("SNIPPET_MAX_FILE_BYTES", 200_000, minimum=1)
SNIPPET_MAX_TOTAL_BYTES = env_int("SNIPPET_MAX_TOTAL_BYTES", 1_000_000, minimum=1)
IDEMPOTENCY_KEY_DAYS = env_int("IDEMPOTENCY_KEY_DAYS", 30, minimum=1)
# JSON escaping can double a file's size on the wire; anything bigger is refused unread.
DATA_UPLOAD_MAX_MEMORY_SIZE = SNIPPET_MAX_TOTAL_BYTES * 2 + 256 * 1024

# An npm registry for the dependencies an app's package.json names (rooms/registry/): unset,
# apps use only the curated library set. Resolved when proposed, within these limits; the
# packages are stored, never fetched again for that proposal (README "Packages from a registry").
NPM_REGISTRY_URL = env_str("NPM_REGISTRY_URL", "").rstrip("/")
NPM_REGISTRY_TOKEN = env_str("NPM_REGISTRY_TOKEN", "")  # sent as a bearer token, if set
NPM_MAX_PACKAGES = env_int("NPM_MAX_PACKAGES", 150, minimum=1)  # per app, all transitive
NPM_MAX_UNPACKED_BYTES = env_int("NPM_MAX_UNPACKED_BYTES", 60_000_000, minimum=1)  # per app
NPM_RESOLVE_SECONDS = env_int("NPM_RESOLVE_SECONDS", 30, minimum=1)  # the whole resolution
# Where a package's page is: the card links each package there.
NPM_PACKAGE_PAGE = env_str("NPM_PACKAGE_PAGE", "https://www.npmjs.com/package/{name}/v/{version}")

# One budget per token (else per client address) for REST, its long-poll and MCP together
# (osfoundry/ratelimit.py); MCP_RATE_LIMIT/MCP_RATE_WINDOW, the old names, work this release.
RATE_LIMIT = env_int(env_renamed("RATE_LIMIT", "MCP_RATE_LIMIT"), 2000, minimum=1)  # calls
RATE_WINDOW = env_int(env_renamed("RATE_WINDOW", "MCP_RATE_WINDOW"), 60, minimum=1)  # seconds

# The async routes' database threads per process (osfoundry/dbthreads.py: MCP, the long-poll).
DATABASE_THREADS = env_int(env_renamed("DATABASE_THREADS", "MCP_DATABASE_THREADS"), 8, minimum=1)
DATABASE_THREAD_CONN_MAX_AGE = env_int(
    env_renamed("DATABASE_THREAD_CONN_MAX_AGE", "MCP_CONN_MAX_AGE"), 300
)

# Threads per process serving git (rooms/git/server.py): one, with a connection, per push/clone.
GIT_THREADS = env_int("GIT_THREADS", 10, minimum=1)
