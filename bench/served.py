"""The product as production serves it, for the benchmarks: `manage.py serve` (gunicorn) on a local port against
a benchmark's own database, DEBUG off, reached over plain HTTP as if behind a TLS proxy."""

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ProductionServer:
    def __init__(
        self, url: str, port: int, data: Path, secret: str, log: IO[str] | None = None, root: Path = ROOT
    ) -> None:
        """`root` is the checkout whose code serves (another worktree's, to time two versions on one database)."""
        self.port = port
        data.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECURE_SSL_REDIRECT", "ALLOWED_HOSTS"}}
        env.update(
            DATABASE_URL=url, SECRET_KEY=secret + "k" * 60, ALLOWED_HOSTS="127.0.0.1",
            BEHIND_PROXY="true", SESSIONDESK_DATA_DIR=str(data), STATIC_ROOT=f"{data}/static",
        )  # fmt: skip
        output = log if log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
            cwd=root, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise SystemExit("the server did not start" + (f" ({log.name})" if log is not None else ""))

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        chunked: bool = False,
    ) -> tuple[int, float, http.client.HTTPResponse, bytes]:
        """Status, seconds from sending to the last byte read, the response and its body; a new connection each."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        sent = {"X-Forwarded-Proto": "https", "Host": "127.0.0.1", **(headers or {})}
        started = time.perf_counter()
        conn.request(method, path, body=iter([body]) if chunked and body else body, headers=sent,
                     encode_chunked=chunked)  # fmt: skip
        response = conn.getresponse()
        content = response.read()
        seconds = time.perf_counter() - started
        conn.close()
        return response.status, seconds, response, content

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)
