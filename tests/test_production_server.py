"""`manage.py serve` is a production server: DEBUG off, gunicorn, WhiteNoise serving the static files it
collected, `check --deploy` clean. Started on a free localhost port and fetched like a browser behind TLS."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
HTTPS = {"X-Forwarded-Proto": "https"}  # as the TLS-terminating proxy says (BEHIND_PROXY=true)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def production_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DATABASE_URL", "SECURE_SSL_REDIRECT",
                                                            "SECURE_COOKIES", "ALLOWED_HOSTS"}}
    env.update(
        SECRET_KEY="prod-test-" + "k" * 60,
        ALLOWED_HOSTS="127.0.0.1",
        BEHIND_PROXY="true",
        SESSIONDESK_DATA_DIR=str(tmp_path / "data"),
        STATIC_ROOT=str(tmp_path / "static"),
    )
    return env


MAKE_KEY = (
    "from sessions_app.models import Tenant; from sessions_app.tenancy.api_keys import create_api_key; "
    "print(create_api_key(Tenant.objects.create(slug='prod', name='Prod'), 'server', 'prod')[1])"
)


def manage(env, *args):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)


def test_debug_is_off_and_a_secret_key_is_required_without_one(production_env):
    env = {k: v for k, v in production_env.items() if k != "SECRET_KEY"}
    result = manage(env, "check")
    assert result.returncode != 0 and "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_check_deploy_passes_with_a_production_environment(production_env):
    result = manage(production_env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_server_serves_login_404s_and_static_files(production_env):
    assert manage(production_env, "migrate", "--noinput").returncode == 0
    made = manage(production_env, "shell", "-c", MAKE_KEY)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT, env=production_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                login = httpx.get(f"{base}/login", headers=HTTPS, timeout=5)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the server did not start:\n{_output(server)[-3000:]}")
                time.sleep(0.3)
        assert login.status_code == 200 and "csrfmiddlewaretoken" in login.text
        assert "secure" in login.headers.get("set-cookie", "").lower()
        assert login.headers["server"] == "sessiondesk", "no server software or version is named"
        health = httpx.get(f"{base}/healthz", headers=HTTPS, timeout=5)
        assert health.status_code == 200 and health.text == "ok"
        stylesheet = re.search(r'href="(/static/css/app\.[0-9a-f]{12}\.css)"', login.text)
        assert stylesheet, "static URLs are hashed from the collected manifest"
        css = httpx.get(base + stylesheet.group(1), headers=HTTPS, timeout=5)
        assert css.status_code == 200 and "max-age" in css.headers.get("cache-control", "")
        missing = httpx.get(f"{base}/no/such/page", headers=HTTPS, timeout=5)
        assert missing.status_code == 404
        assert "Traceback" not in missing.text and "SECRET_KEY" not in missing.text
        # The API reference's Swagger UI is a collected, hashed static file like ours.
        reference = httpx.get(f"{base}/api/v1/docs", headers=HTTPS, timeout=5)
        bundle = re.search(r'src="(/static/drf_spectacular_sidecar/[\w/-]+/swagger-ui-bundle\.[0-9a-f]{12}\.js)"',
                           reference.text)
        assert reference.status_code == 200 and bundle, reference.text[:500]
        assert httpx.get(base + bundle.group(1), headers=HTTPS, timeout=5).status_code == 200
        # The MCP server answers under gunicorn's sync worker (the SDK's ASGI handler bridged per request).
        tools = httpx.post(
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**HTTPS, "Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"},
            timeout=10,
        )
        assert tools.status_code == 200, tools.text
        assert "search_sessions" in {tool["name"] for tool in tools.json()["result"]["tools"]}
        # The query limit (4,096 characters) is reachable through gunicorn: 4,096 two-byte characters are a
        # 49 kB request line once percent-encoded, past gunicorn's default 4,094 bytes (issue 29's undocumented 414).
        longest = httpx.get(
            f"{base}/api/v1/search",
            params={"q": "é" * 4096, "scope": "tenant"},
            headers={**HTTPS, "Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert longest.status_code == 200, longest.text[:300]
        plain = httpx.get(f"{base}/login", timeout=5)
        assert plain.status_code == 301 and plain.headers["location"].startswith("https://")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


def _output(server: subprocess.Popen[bytes]) -> str:
    """What the server printed, once it is stopped: reading a live server's pipe would wait for ever."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
    try:
        return (server.communicate(timeout=20)[0] or b"").decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        return "(the server did not stop within 20 s of SIGTERM)"


def _fold_workers(group: int) -> set[int]:
    """The `manage.py fold_worker` processes of the server's process group."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if b"fold_worker" in cmdline and os.getpgid(int(entry)) == group:
                found.add(int(entry))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


def _wait_for(predicate, what: str, server) -> None:
    deadline = time.monotonic() + 60
    while not predicate():
        if server.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{what}:\n{_output(server)[-3000:]}")
        time.sleep(0.3)


def test_the_server_runs_a_fold_worker_and_restarts_it_when_killed(production_env):
    assert manage(production_env, "migrate", "--noinput").returncode == 0
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{free_port()}", "--workers", "1"],
        cwd=ROOT, env=production_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        _wait_for(lambda: _fold_workers(server.pid), "no fold worker started", server)
        (first,) = _fold_workers(server.pid)
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: _fold_workers(server.pid) - {first}, "the killed fold worker was not restarted", server)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
    deadline = time.monotonic() + 30
    while _fold_workers(server.pid):
        assert time.monotonic() < deadline, "the fold worker outlived the server"
        time.sleep(0.3)
