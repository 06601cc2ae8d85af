"""Issue 27's review paths on the users' path, as a tenant's history grows: the list's `score:`, `label:` and
`sort:` clauses, a review queue (fill, take next), the comment search and the conversation page with its scores
and comments.

    flock /tmp/bench.lock .venv/bin/python bench/review.py [--sizes 10 100 1000 5000] [--requests 20] \
        [--messages-per-run 20] [--database postgres://root@127.0.0.1:5432/bench27] [--port 8127]

Everything arrives as a user's data does, through the product's doors, with `manage.py serve` (gunicorn, 2 sync
workers, production settings: DEBUG off, hashed static files, `check --deploy`) answering over HTTP:
- tenants, members and server keys by `manage.py create_tenant`, `add_member`, `create_api_key`;
- runs by `manage.py import_sessions` of a JSONL file of API-shaped snapshots (two runs a conversation,
  `--messages-per-run` pydantic-ai messages a run), one process per tenant;
- score names by an admin on the settings page (POST /settings/scores/, signed in through /login);
- scores by POST /api/v1/scores with server keys (an evaluation job's `helpfulness` 1 to 5 on each conversation
  and one of its runs; a second key's `escalate` yes on a tenth and no on a fifth, and a `topic` on half), four
  clients at once;
- comments by the member on the conversation page (POST /c/<id>/comment) on every fifth conversation.

One tenant per size (`review-10`, `review-100`, …) in one database, so each is timed beside the others' rows.
Each request is a new connection (no keep-alive), timed from the client: wall time, not server time alone. Every
case is timed `--requests` times after a warm-up. The database is this script's own: dropped and made again.
Results go to bench/results/review.json and print as the tables docs/BENCHMARKS.md shows.
"""

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote, urlencode

from served import ProductionServer

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data" / "review"
PASSWORD = "bench-review-password-27"  # noqa: S105  (a throwaway member of a throwaway database)
RUNS_PER_CONVERSATION = 2
TOPICS = ("billing", "shipping", "returns", "other")
COMMENT_WORDS = ("refund", "courier", "invoice", "escalated", "duplicate", "address", "warehouse", "tracking")
LIST_CASES = {
    "list, first page (no clause)": "",
    "list, score:helpfulness>=4": "score:helpfulness>=4",
    "list, score:helpfulness=1": "score:helpfulness=1",
    "list, label:escalate (a tenth)": "label:escalate",
    "list, label:billing (a category)": "label:billing",
    "list, sort:helpfulness": "sort:helpfulness",
    "list, sort:helpfulness:asc": "sort:helpfulness:asc",
    "list, score:helpfulness>=4 label:escalate sort:helpfulness": (
        "score:helpfulness>=4 label:escalate sort:helpfulness"
    ),
}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summary(ms: list[float]) -> dict:
    return {"median_ms": round(statistics.median(ms), 1), "p95_ms": round(percentile(ms, 0.95), 1), "n": len(ms)}


class Browser:
    """One member's cookies over plain http.client (the server sits behind an assumed TLS proxy, so the secure
    cookies come back on plain HTTP here, as a proxy would pass them)."""

    def __init__(self, server: ProductionServer) -> None:
        self.server = server
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict | None = None, headers: dict | None = None):
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            form = {**form, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
            body = urlencode(form).encode()
            sent |= {"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://127.0.0.1",
                     "Referer": "https://127.0.0.1/"}  # fmt: skip
        status, seconds, response, content = self.server.request(method, path, body, sent)
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return status, seconds, response, content

    def login(self, username: str) -> None:
        self.request("GET", "/login")
        status, _, response, _ = self.request("POST", "/login", {"username": username, "password": PASSWORD})
        if status != 302:
            raise SystemExit(f"login of {username} answered {status}")


def start_server(url: str, port: int) -> ProductionServer:
    return ProductionServer(url, port, DATA / "server", "bench-review-", log=(DATA / "server.log").open("w"))


def manage(url: str, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "bench-review-" + "k" * 60}
    env.pop("DEBUG", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, input=stdin, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def fresh_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0].replace("postgres://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    manage(url, "migrate", "-v", "0")


def analyze(url: str) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute("ANALYZE")


def _message(kind: str, part: dict, at: datetime) -> dict:
    stamp = at.isoformat().replace("+00:00", "Z")
    if kind == "request":
        return {"kind": "request", "parts": [{**part, "timestamp": stamp}]}
    return {"kind": "response", "parts": [part], "timestamp": stamp}


def run_snapshot(conversation: str, run: int, messages: int, at: datetime) -> dict:
    history: list[dict] = []
    turn = 0
    while len(history) < messages:
        order, call = f"ORD-{run:02d}{turn:03d}", f"{conversation}-{run}-{turn}"
        history += [
            _message("request", {"part_kind": "user-prompt", "content": f"Where is order {order}?"}, at),
            _message(
                "response",
                {"part_kind": "tool-call", "tool_name": "lookup_order", "args": {"order": order}, "tool_call_id": call},
                at,
            ),  # fmt: skip
            _message(
                "request",
                {
                    "part_kind": "tool-return",
                    "tool_name": "lookup_order",
                    "content": f"{order}: shipped",
                    "tool_call_id": call,
                },
                at,
            ),  # fmt: skip
            _message("response", {"part_kind": "text", "content": f"Order {order} has shipped."}, at),
        ]
        turn += 1
    return {
        "conversation_id": conversation,
        "run_id": f"{conversation}-run-{run}",
        "agent": "support_agent",
        "state": "complete",
        "started_at": (at + timedelta(minutes=run)).isoformat().replace("+00:00", "Z"),
        "messages": history[:messages],
    }


def build(url: str, server: ProductionServer, slug: str, runs: int, messages: int, rng: random.Random) -> dict:
    conversations = [f"{slug}-{n:05d}" for n in range(max(1, runs // RUNS_PER_CONVERSATION))]
    manage(url, "create_tenant", slug, "--name", slug)
    member = f"bench-{slug}"
    manage(url, "add_member", "--tenant", slug, "--user", member, "--role", "admin", "--password-stdin",
           stdin=PASSWORD + "\n")  # fmt: skip
    keys = [
        manage(url, "create_api_key", "--tenant", slug, "--kind", "server", "--label", label).strip()
        for label in ("evaljob", "triage")
    ]
    started = time.perf_counter()
    path = DATA / f"{slug}.jsonl"
    start = datetime(2026, 11, 1, tzinfo=UTC)
    with path.open("w") as handle:
        for n, conversation in enumerate(conversations):
            at = start - timedelta(minutes=n * 7)
            for r in range(RUNS_PER_CONVERSATION):
                handle.write(json.dumps(run_snapshot(conversation, r, messages, at)) + "\n")
    manage(url, "import_sessions", "--tenant", slug, str(path))
    imported = time.perf_counter() - started

    browser = Browser(server)
    browser.login(member)
    for form in (
        {"name": "helpfulness", "kind": "numeric", "minimum": "1", "maximum": "5"},
        {"name": "escalate", "kind": "boolean"},
        {"name": "topic", "kind": "categorical", "categories": ",".join(TOPICS)},
    ):
        status = browser.request("POST", "/settings/scores/", form)[0]
        if status not in (200, 302):
            raise SystemExit(f"defining {form['name']} answered {status}")

    started = time.perf_counter()
    posts: list[tuple[str, dict]] = []
    for conversation in conversations:
        posts.append((keys[0], {"conversation_id": conversation, "name": "helpfulness", "value": rng.randint(1, 5)}))
        posts.append((keys[0], {"conversation_id": conversation, "run_id": f"{conversation}-run-{rng.randint(0, 1)}",
                                "name": "helpfulness", "value": rng.randint(1, 5)}))  # fmt: skip
        roll = rng.random()
        if roll < 0.3:
            posts.append((keys[1], {"conversation_id": conversation, "name": "escalate", "value": roll < 0.1}))
        if rng.random() < 0.5:
            posts.append((keys[1], {"conversation_id": conversation, "name": "topic", "value": rng.choice(TOPICS)}))

    def post(item: tuple[str, dict]) -> int:
        key, body = item
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        return server.request("POST", "/api/v1/scores", json.dumps(body).encode(), headers)[0]

    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(post, posts))
    if set(statuses) != {201}:
        raise SystemExit(f"score posts answered {sorted(set(statuses))}")
    scored = time.perf_counter() - started

    started = time.perf_counter()
    commented = conversations[::5]
    for n, conversation in enumerate(commented):
        body = f"Checked with the {rng.choice(COMMENT_WORDS)} team: {rng.choice(COMMENT_WORDS)} case {n}."
        status = browser.request("POST", f"/c/{conversation}/comment", {"body": body})[0]
        if status != 302:
            raise SystemExit(f"comment on {conversation} answered {status}")
    return {
        "import_sessions_s": round(imported, 1),
        "score_posts": len(posts),
        "score_posts_s": round(scored, 1),
        "comments": len(commented),
        "comments_s": round(time.perf_counter() - started, 1),
        "browser": browser,
        "conversations": conversations,
    }


def time_get(browser: Browser, path: str, repeat: int) -> dict:
    for _ in range(2):
        status = browser.request("GET", path)[0]
        if status != 200:
            raise SystemExit(f"GET {path} answered {status}")
    ms = []
    for _ in range(repeat):
        status, seconds, _, content = browser.request("GET", path)
        assert status == 200, (path, status)
        ms.append(seconds * 1000)
    # What the page found: list rows, or the comment search's hits (each links its conversation).
    return summary(ms) | {"rows": content.count(b"<tr data-nav-item"), "bytes": len(content)}


def time_queue(browser: Browser, slug: str, repeat: int) -> dict:
    """Fill a queue from the list filtered by `label:escalate` (POST /queues/new), then take the next item
    (POST /queues/<pk>/next) `repeat` times: each take finds the reviewer's taken item, so the item is marked
    done first and the next take takes a new one."""
    fill, take, done = [], [], []
    source = "/conversations/?q=" + quote("score:helpfulness>=2 sort:helpfulness")
    queue = ""
    for n in range(max(3, repeat // 4)):
        status, seconds, response, _ = browser.request("POST", "/queues/new", {"name": f"q{n}", "source": source})
        assert status == 302, status
        fill.append(seconds * 1000)
        queue = response.getheader("Location")
    for _ in range(repeat):
        status, seconds, response, _ = browser.request("POST", f"{queue}next", {})
        assert status == 302, status
        take.append(seconds * 1000)
        item = re.search(r"review_item=(\d+)", response.getheader("Location") or "")
        if not item:
            break
        status, seconds, _, _ = browser.request("POST", f"/queues/items/{item[1]}/done", {})
        done.append(seconds * 1000)
    return {
        "queue, fill from a list filter (up to 500 items)": summary(fill),
        "queue, take next": summary(take),
        "queue, mark done": summary(done),
        "queue, its page": time_get(browser, queue, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="postgres://root@127.0.0.1:5432/bench27")
    parser.add_argument("--port", type=int, default=8127)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000], help="runs per tenant")
    parser.add_argument("--messages-per-run", type=int, default=20)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--keep", action="store_true", help="time the tenants already built (after a code change)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "review.json"))
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    if not args.keep:
        fresh_database(args.database)
    report: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "path": "manage.py serve (gunicorn, 2 workers) over HTTP; data by import_sessions and the HTTP doors",
        "load_average_at_start": os.getloadavg(),
        "sizes": [],
    }
    server = start_server(args.database, args.port)
    try:
        for runs in args.sizes:
            slug = f"review-{runs}"
            if args.keep:
                built = {"browser": Browser(server), "conversations": [f"{slug}-00000"]}
                built["browser"].login(f"bench-{slug}")
            else:
                print(f"building {slug}: {runs} runs …", flush=True)
                built = build(args.database, server, slug, runs, args.messages_per_run,
                              random.Random(args.seed + runs))  # fmt: skip
            browser, conversations = built.pop("browser"), built.pop("conversations")
            analyze(args.database)
            size: dict = {"runs": runs, "messages": runs * args.messages_per_run, "build": built,
                          "load_average": os.getloadavg(), "results": {}}  # fmt: skip
            cases = {name: "/conversations/" + (f"?q={quote(q)}" if q else "") for name, q in LIST_CASES.items()}
            cases["comment search, a common word"] = "/comments/?q=refund"
            cases["comment search, a word in no comment"] = "/comments/?q=zeppelin"
            cases["conversation page with its scores and comments"] = f"/c/{conversations[0]}/"
            for name, path in cases.items():
                size["results"][name] = time_get(browser, path, args.requests)
                print(f"  {name}: {size['results'][name]}", flush=True)
            for name, result in time_queue(browser, slug, args.requests).items():
                size["results"][name] = result
                print(f"  {name}: {result}", flush=True)
            size["load_average_after"] = os.getloadavg()
            report["sizes"].append(size)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(report, indent=2))
    finally:
        server.stop()
    head = " | ".join(f"{s['runs']:,} runs ({s['messages']:,} msgs)" for s in report["sizes"])
    print(f"\nmedian / p95 ms over HTTP\n| case | {head} |\n| --- |" + " ---: |" * len(report["sizes"]))
    for name in report["sizes"][0]["results"]:
        cells = " | ".join(f"{s['results'][name]['median_ms']} / {s['results'][name]['p95_ms']}"
                           for s in report["sizes"])  # fmt: skip
        print(f"| {name} | {cells} |")
    loads = " | ".join(f"{s['load_average'][0]:.1f}" for s in report["sizes"])
    print(f"| load average (1 min) at the start | {loads} |")


if __name__ == "__main__":
    main()
