"""The production lane in a test: deploy/nginx.conf served by Debian's nginx on a free port in
front of uvicorn workers, each a process of its own on its own port (as docs/operators.md
runs them), so a test can stop or kill one. bench/ uses it too.

The configuration is the file users deploy, with three changes only: the upstream lists the
workers' ports, the server listens on plain HTTP on 127.0.0.1, and the certificate lines go.
"""

import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.servers import free_port, start_uvicorn, stop_process, wait_until_ready

ROOT = Path(__file__).resolve().parent.parent
NGINX = "/usr/sbin/nginx"
DEPLOYED_CONF = ROOT / "deploy" / "nginx.conf"
UPSTREAM_SERVER = re.compile(r"^(\s*)server 127\.0\.0\.1:\d+(.*);$")

# Two connections per parked agent. Each nginx worker holds as many descriptors as the limit it
# inherits (bench/longpoll.py raises its own to the hard limit before starting it);
# worker_rlimit_nofile would fail where the hard limit is lower. Two workers, as `auto` gives on
# these 2 cores: 10,000 parked agents need 20,000 descriptors, this machine's hard limit.
MAIN_CONF = """\
{user}
worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 32768; }}
http {{
    access_log off;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    include {work}/osfoundry.conf;
}}
"""


def require_nginx() -> None:
    if not os.access(NGINX, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail(f"{NGINX} is required in CI (make test installs nginx-light)")
        pytest.skip(f"{NGINX} is not installed (apt-get install nginx-light)")


def render_conf(text: str, *, listen_port: int, upstream_ports: list[int]) -> str:
    """deploy/nginx.conf for this machine: our workers, plain HTTP on `listen_port`."""
    out: list[str] = []
    upstream_done = False
    for line in text.splitlines():
        stripped = line.strip()
        if match := UPSTREAM_SERVER.match(line):
            if not upstream_done:
                indent, options = match.groups()
                out += [f"{indent}server 127.0.0.1:{port}{options};" for port in upstream_ports]
                upstream_done = True
        elif stripped.startswith("listen "):
            out.append(f"    listen 127.0.0.1:{listen_port};")
        elif not stripped.startswith("ssl_"):
            out.append(line)
    assert upstream_done, "deploy/nginx.conf lists no upstream server 127.0.0.1:<port>"
    return "\n".join(out) + "\n"


def start_nginx(work: Path, upstream_ports: list[int]) -> tuple[subprocess.Popen, str]:
    """deploy/nginx.conf in front of `upstream_ports`; returns (process, base URL)."""
    require_nginx()
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = render_conf(DEPLOYED_CONF.read_text(), listen_port=port, upstream_ports=upstream_ports)
    (work / "osfoundry.conf").write_text(conf)
    # As root, nginx's workers would run as nobody, who cannot enter a test's private folder.
    user = "user root;" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(MAIN_CONF.format(user=user, work=work))
    process = subprocess.Popen(
        [NGINX, "-p", str(work), "-c", str(work / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=open(work / "stderr.log", "w"),  # closed by stop_process()
    )
    process.log_file = process.stderr
    base_url = f"http://127.0.0.1:{port}"
    wait_until_ready(process, base_url, timeout=10, log_path=work / "stderr.log")
    return process, base_url


@dataclass
class Worker:
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def log(self) -> str:
        return self.log_path.read_text()


@dataclass
class Deployment:
    """Workers behind nginx. `url` is the proxy's; `workers[i].url` reaches one directly."""

    url: str
    nginx: subprocess.Popen
    workers: list[Worker] = field(default_factory=list)
    env: dict = field(default_factory=dict)

    def start_worker(self, port: int, work: Path) -> Worker:
        log_path = work / f"worker-{port}.log"
        process, _url = start_uvicorn(
            env=self.env,
            port=port,
            log_path=log_path,
            options=["--no-access-log", "--timeout-graceful-shutdown", "20"],
            cwd=ROOT,
        )
        return Worker(port, process, log_path)

    def stop(self) -> None:
        for worker in self.workers:
            if worker.process.poll() is None:
                stop_process(worker.process)
        stop_process(self.nginx)


def deploy(work: Path, env: dict, *, workers: int = 2) -> Deployment:
    """Start `workers` uvicorn processes with `env` and nginx in front; the caller stops it."""
    ports = [free_port() for _ in range(workers)]
    deployment = Deployment(url="", nginx=None, env=env)  # type: ignore[arg-type]
    try:
        for port in ports:
            deployment.workers.append(deployment.start_worker(port, work))
        deployment.nginx, deployment.url = start_nginx(work / "nginx", ports)
    except BaseException:
        for worker in deployment.workers:
            stop_process(worker.process)
        raise
    return deployment
