import os
import time

import pytest
from django.contrib.auth import get_user_model

from agents.tokens import create_access_token
from rooms.demo import standup_timer_files
from rooms.models import Project, Room

os.environ.setdefault("STATIC_MANIFEST", "0")
# No proposal-mail thread in test servers: the tests call notifications.services themselves.
os.environ.setdefault("PROPOSAL_EMAIL_POLL_SECONDS", "0")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    # `make mutants` runs a test process per mutant, several at once in one folder: on SQLite
    # they would create and drop the same test database file under each other, and every
    # mutant would count as killed.
    if os.environ.get("MUTANT_UNDER_TEST"):
        from django.conf import settings

        for database in settings.DATABASES.values():
            if database["ENGINE"] == "django.db.backends.sqlite3" and database["TEST"].get("NAME"):
                database["TEST"]["NAME"] = f"{database['TEST']['NAME']}.{os.getpid()}"


@pytest.fixture(scope="session", autouse=True)
def _close_kept_connections(django_db_setup):
    # Threads that outlive a test keep their database connections: the async routes' database
    # threads (osfoundry/dbthreads.py) and asgiref's one thread for sync code run from async
    # code. PostgreSQL drops the test database only once no session uses it.
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from osfoundry.dbthreads import shutdown_database_threads

    shutdown_database_threads()
    SyncToAsync.single_thread_executor.submit(connections.close_all).result(15)
    # Whatever thread of an in-process live server is left (Django streams a file through a
    # thread of its own, a version check may still run) may hold one, or open one after this
    # point: end those sessions right before the drop, on PostgreSQL only.
    connection = connections["default"]
    if connection.vendor == "postgresql":  # called only when a test database is dropped
        creation = connection.creation
        drop = creation._destroy_test_db

        def end_sessions_then_drop(test_database_name, verbosity):
            with creation._nodb_cursor() as cursor:
                others = "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
                cursor.execute(f"SELECT pg_terminate_backend(pid) {others}", [test_database_name])
                # pg_terminate_backend only signals: wait until the sessions are gone, or the
                # drop fails ("is being accessed by other users") and leaves the database.
                for _ in range(100):
                    cursor.execute(f"SELECT count(*) {others}", [test_database_name])
                    if not cursor.fetchone()[0]:
                        break
                    time.sleep(0.05)
            drop(test_database_name, verbosity)

        creation._destroy_test_db = end_sessions_then_drop


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    # Real hashing costs ~0.5 s per user; the tests create several users each.
    from django.conf import settings

    saved = settings.PASSWORD_HASHERS
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    yield
    settings.PASSWORD_HASHERS = saved


@pytest.fixture(autouse=True)
def _plain_static(settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
    # Fast hashing for test users; PBKDF2 stays available for users a live server must check.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rate-limit counters and cached highlighting must not leak from one test into the next.
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings):
    # Every REST and MCP call is counted: each test starts with full budgets, in this process
    # and in Redis (a prefix of its own; test databases repeat token ids).
    import uuid

    from osfoundry import ratelimit

    ratelimit.local.clear()
    settings.REDIS_PREFIX = f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def _fresh_long_poll_memory():
    # Each test starts a new database whose ids repeat: what this process remembered of the
    # last test's long-polls (agents.idle.memory, the wake-ups' latest sequences) is void.
    from agents import idle, presence
    from osfoundry import wakeups

    idle.memory.reset()
    presence.memory.reset()
    wakeups.registry.forget_all()
    yield


@pytest.fixture(autouse=True)
def _fresh_channel_layer():
    # Each async test runs on an event loop of its own, and a channel layer keeps loop-bound
    # state from one call to the next: channels_redis leaves a per-channel receive lock behind
    # when a receive is cancelled while it waits for it (django/channels_redis#313), bound to
    # that test's loop, and a later test's contended receive on it fails with "bound to a
    # different event loop" (its consumer stops receiving). One process runs one loop in
    # production; in the tests, each test gets a layer of its own. The servers the tests
    # start are processes of their own, untouched by this.
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def make_user(username):
    return get_user_model().objects.create_user(username, f"{username}@example.com", "pw-12345678")


@pytest.fixture
def owner(db):
    return make_user("owner")


@pytest.fixture
def member(db):
    return make_user("member")


@pytest.fixture
def stranger(db):
    return make_user("stranger")


@pytest.fixture
def agent(db):
    return make_user("agent")


@pytest.fixture
def project(db):
    return Project.objects.create(name="Demo")


@pytest.fixture
def room_factory(project, owner):
    def create(*, name=None, kind=Room.Kind.CLOUD, room_owner=None, members=()):
        room = Room.objects.create(
            project=project,
            name=name or f"Room {Room.objects.count() + 1}",
            kind=kind,
            owner=room_owner or owner,
        )
        room.members.add(*members)
        return room

    return create


@pytest.fixture
def room(room_factory, member, agent):
    """A cloud Room owned by `owner`, with `member` and `agent` as members."""
    return room_factory(name="Team Falcon", members=[member, agent])


@pytest.fixture
def token_factory():
    def create(user, scopes="osfoundry:read osfoundry:write"):
        return create_access_token(user=user, scopes=scopes)[1]

    return create


@pytest.fixture
def agent_token(project, token_factory):
    """A (raw token, profile) pair: the token's connection has claimed `handle`."""
    from agents.services import claim_connected_profile
    from osfoundry.auth import authenticate_bearer

    def create(user, handle):
        project.members.add(user)
        raw = token_factory(user)
        principal = authenticate_bearer(raw)
        profile = claim_connected_profile(
            user=user, connection_key=principal.token_key, handle=handle
        ).profile
        return raw, profile

    return create


@pytest.fixture
def files():
    return standup_timer_files()


@pytest.fixture
def asgi_server(transactional_db, settings):
    """The whole ASGI application served by uvicorn on 127.0.0.1 (see tests/live.py)."""
    import uuid

    from tests.live import LiveServer

    # Redis outlives the test database: a fresh prefix keeps counts from earlier runs away.
    settings.REDIS_PREFIX = f"test-{uuid.uuid4().hex[:12]}"

    server = LiveServer().start()
    yield server
    server.stop()
