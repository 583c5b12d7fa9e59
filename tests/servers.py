"""Helpers for tests that need a real server: skip only when it is truly absent, never in CI."""

import os
import socket

import pytest


def require(host: str, port: int, what: str) -> None:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        if os.environ.get("CI"):
            pytest.fail(f"{what} at {host}:{port} is required in CI but is not reachable")
        pytest.skip(f"{what} at {host}:{port} is not running")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
