"""Issue 29's hostile inputs against the production server: each answers its expected status within 1 s while a
light request (GET /healthz) keeps being served beside it.

    flock /tmp/bench.lock .venv/bin/python bench/security.py [--database postgres://root@127.0.0.1:5432/sd_bench_security]

Runs `manage.py serve` (gunicorn, 2 sync workers, DEBUG off) on PostgreSQL, stores the data a few inputs need
(a message beside a 60 kB hex run, a 30,001-character message in a tenant with the pattern `(a+)+$`) through the
API, then sends every input once while a second thread polls /healthz. Prints one row per input (status, seconds)
and the light request's median and worst latency; writes bench/results/security.json.
"""

import argparse
import base64
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from served import ProductionServer, free_port  # noqa: E402  (bench/ is on the path from here)


def _project_first() -> None:
    """bench/ after the project (it is the script's own folder, and pages.py puts it first too): bench/masking.py
    must not shadow the masking package when the settings load its log filter."""
    sys.path[:] = [str(ROOT)] + [path for path in sys.path if Path(path or ".").resolve() != ROOT / "bench"]
    sys.path.append(str(ROOT / "bench"))


def prepare(url: str) -> tuple[str, str]:
    """A fresh database (this script's own: dropped and made again), two tenants with a server key each; the second
    has the pattern `(a+)+$`."""
    import psycopg
    from pages import configure

    _project_first()
    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0].replace("postgres://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    configure(url)
    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    plain = Tenant.objects.create(slug="sec-plain", name="Plain")
    pattern = Tenant.objects.create(slug="sec-pattern", name="Pattern", redaction_patterns=["(a+)+$"])
    return create_api_key(plain, "server")[1], create_api_key(pattern, "server")[1]


def _snapshot(conversation: str, text: str) -> bytes:
    messages = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": text}]}]
    return json.dumps({"conversation_id": conversation, "run_id": f"{conversation}-r", "messages": messages}).encode()


def inputs(plain: str, pattern: str) -> list[tuple[str, str, str, bytes | None, dict[str, str], bool, int]]:
    """(name, method, path, body, headers, chunked, expected status), in the issue's order."""
    server_json = {"Authorization": f"Bearer {plain}", "Content-Type": "application/json"}
    letters = "abcdefghijklmnopqrstu"
    prefixes = "+".join(f"{a}{b}*" for a in letters for b in letters)
    usage = json.loads(_snapshot("sec-tokens", "tokens"))
    usage["messages"].append({"kind": "response", "parts": [{"part_kind": "text", "content": "ok"}],
                              "usage": {"input_tokens": 2**70}})  # fmt: skip
    big = {
        "conversation_id": "sec-big",
        "run_id": "sec-big-r",
        "messages": [
            {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x" * 2_000_000}]} for _ in range(4)
        ],
    }
    return [
        ("invalid JSON: 65,000 escaped quotes", "POST", "/api/v1/snapshots", b'"' + b'\\"' * 65_000, server_json,
         False, 400),
        ("OTLP/JSON: 65,000 escaped quotes", "POST", "/v1/traces", b'"' + b'\\"' * 65_000,
         {"Authorization": f"Bearer {plain}", "Content-Type": "application/json"}, False, 400),
        ("search hit beside a 60 kB hex run", "GET", "/api/v1/search?q=canary&scope=tenant", None,
         {"Authorization": f"Bearer {plain}"}, False, 200),
        ("420 two-letter prefixes", "GET", f"/api/v1/search?q={prefixes}&scope=tenant", None,
         {"Authorization": f"Bearer {plain}"}, False, 400),
        ("pattern (a+)+$, 30,001-character message, search", "GET", "/api/v1/search?q=aaa*&scope=tenant", None,
         {"Authorization": f"Bearer {pattern}"}, False, 200),
        ("4 messages of 2 MB", "POST", "/api/v1/snapshots", json.dumps(big).encode(), server_json, False, 413),
        ("token count 2**70", "POST", "/api/v1/snapshots", json.dumps(usage).encode(), server_json, False, 400),
        ("chunked snapshot body", "POST", "/api/v1/snapshots", _snapshot("sec-chunked", "hello"), server_json,
         True, 411),
        ("key + 20,000 dashes (500 after 60.2 s)", "POST", "/api/v1/snapshots",
         _snapshot("sec-dashes", "key " + "-" * 20_000), server_json, False, 201),
        ("key + 60 kB base64url (29.0 s)", "POST", "/api/v1/snapshots",
         _snapshot("sec-blob", "key " + base64.urlsafe_b64encode(bytes(range(256)) * 176).decode()), server_json,
         False, 201),
        ("a second write to that conversation (16.5 s)", "POST", "/api/v1/snapshots",
         _snapshot("sec-blob", "a follow-up after the blob"), server_json, False, 201),
        ("x:// + a. x 100,000 (23.0 s)", "POST", "/api/v1/snapshots", _snapshot("sec-dots", "x:// " + "a." * 100_000),
         server_json, False, 201),
        ("a part of token=a matches at the 1,000,000 cap", "POST", "/api/v1/snapshots",
         _snapshot("sec-matches", "token=a " * 124_990), server_json, False, 201),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", default="postgres://root@127.0.0.1:5432/sd_bench_security")
    args = parser.parse_args()
    plain, pattern = prepare(args.database)
    data = Path(tempfile.mkdtemp(prefix="sd-bench-security-"))
    server = ProductionServer(args.database, free_port(), data, "bench-security-")
    try:
        json_headers = {"Content-Type": "application/json"}
        seeds = [
            (plain, _snapshot("sec-hex", "canary " + "0f" * 30_000)),
            (pattern, _snapshot("sec-redos", "a" * 30_000 + "!")),
        ]
        for key, body in seeds:
            headers = {**json_headers, "Authorization": f"Bearer {key}"}
            status = server.request("POST", "/api/v1/snapshots", body, headers)[0]
            assert status in (200, 201), status
        light: list[float] = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                light.append(server.request("GET", "/healthz")[1])
                time.sleep(0.05)

        poller = threading.Thread(target=poll)
        poller.start()
        rows = []
        for name, method, path, body, headers, chunked, expected in inputs(plain, pattern):
            status, seconds = server.request(method, path, body, headers, chunked)[:2]
            rows.append({"input": name, "expected": expected, "status": status, "seconds": round(seconds, 3)})
        # The 420 prefixes eight at once (41.9 s each): the slowest of the eight.
        name, method, path, body, headers, chunked, expected = next(
            row for row in inputs(plain, pattern) if row[0] == "420 two-letter prefixes"
        )
        answers: list[tuple[int, float]] = []
        searches = [
            threading.Thread(target=lambda: answers.append(server.request(method, path, body, headers, chunked)[:2]))
            for _ in range(8)
        ]
        for thread in searches:
            thread.start()
        for thread in searches:
            thread.join()
        statuses = {status for status, _ in answers}
        rows.append({"input": "420 two-letter prefixes, 8 at once (slowest)", "expected": expected,
                     "status": statuses.pop() if len(statuses) == 1 else -1,
                     "seconds": round(max(seconds for _, seconds in answers), 3)})  # fmt: skip
        stop.set()
        poller.join()
    finally:
        server.stop()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": platform.platform(),
        "load": os.getloadavg(), "inputs": rows,
        "light_request": {"count": len(light), "median_s": round(statistics.median(light), 4),
                          "max_s": round(max(light), 4)},
    }  # fmt: skip
    out = ROOT / "bench" / "results" / "security.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'input':52} {'expected':>8} {'status':>6} {'seconds':>8}")
    for row in rows:
        mark = "" if row["status"] == row["expected"] and row["seconds"] < 1 else "  <-- MISSED"
        print(f"{row['input']:52} {row['expected']:>8} {row['status']:>6} {row['seconds']:>8.3f}{mark}")
    print(f"GET /healthz beside them: {result['light_request']}; load {result['load']}")


if __name__ == "__main__":
    main()
