"""The MCP endpoint's database threads keep a connection between calls and drop a bad one."""

import asyncio

import pytest
from django.db import connection
from django.db.backends.signals import connection_created

from osfoundry.dbthreads import run_sync, shutdown_database_threads


@pytest.fixture
def opened(transactional_db, settings):
    """Counts the connections the (single) database thread opens."""
    settings.DATABASE_THREADS = 1
    shutdown_database_threads()
    count = []

    def created(sender, connection, **kwargs):
        count.append(connection)

    connection_created.connect(created)
    yield count
    connection_created.disconnect(created)
    shutdown_database_threads()


def query():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def query_and_leave_autocommit_off():
    query()
    connection.set_autocommit(False)


def call(fn):
    asyncio.run(run_sync(fn))


def test_connection_is_kept_between_calls(opened):
    # Even with CONN_MAX_AGE at its default of 0, which Django's own handler honours.
    call(query)
    call(query)
    assert len(opened) == 1


def test_connection_left_outside_autocommit_is_dropped(opened):
    call(query_and_leave_autocommit_off)
    call(query)
    assert len(opened) == 2


def test_connection_is_renewed_after_its_age(opened, settings):
    settings.DATABASE_THREAD_CONN_MAX_AGE = 0
    call(query)
    call(query)
    assert len(opened) == 2
