"""A real ASGI server (uvicorn, the whole osfoundry.asgi application) in a thread of the test
process, on 127.0.0.1 and a free port. Tests that use it take `transactional_db`, so the rows
they create are committed and visible to the server's own database connections."""

import threading
import time

import uvicorn
from asgiref.sync import SyncToAsync
from django.db import connections

from osfoundry.dbthreads import shutdown_database_threads
from tests.servers import free_port

MCP_PATH = "/api/v1/external-mcp"


class LiveServer:
    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mcp_url = self.url + MCP_PATH
        config = uvicorn.Config(
            "osfoundry.asgi:application",
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
            access_log=False,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the live server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        shutdown_database_threads()
        # Django's views may have run in asgiref's one thread: close what they opened there, or
        # PostgreSQL cannot drop the test database.
        SyncToAsync.single_thread_executor.submit(connections.close_all).result(15)
