"""On Citus, a tenant moves online: isolated to a shard of its own and that shard moved to the other worker while
an agent keeps posting snapshots to it; no write is lost or answered 5xx, and its search is exact afterwards.

The move copies by logical replication (`citus_move_shard_placement(..., shard_transfer_mode => 'force_logical')`):
the tenant's writes go on during the copy and wait only for the switch-over. Citus decodes the shard's changes with
its own output plugin, the library `citus`; this PostgreSQL (15.20-0+deb12u1) lets a replication connection load
only the libraries listed in `output_plugin_libraries` (default `pgoutput, test_decoding`, settable by a
superuser), so the test adds `citus` to it for its database (`ALTER DATABASE ... SET` on the coordinator, which
Citus propagates to the workers), where the server has that setting at all.

The isolation splits the tenant's shard in place with `block_writes`: Citus 13.2.2's logical split
(`force_logical`) creates the split children's primary keys after their replication slot (shard_split.c, steps 6
and 7), so an UPDATE the agent makes in between is decoded without its key and the subscriber refuses it again
and again (`publisher did not send replica identity column expected by the logical replication target relation`)
until the split is cancelled; docs/SCALING.md, "Moving a tenant". The split copies only the tenant's shard group
on its own node; the move, which copies it to the other node, is the online one.
"""

import json
import threading
import time

import httpx
import pytest
from django.db import connection
from pydantic_ai.messages import ModelMessagesTypeAdapter

from search_app.service import run_search
from sessions_app.models import Run, Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.citus_mode import CITUS_TESTS
from tests.factories import make_tenant

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CITUS_TESTS, reason="needs a Citus coordinator (make test-citus)"),
]
ANCHOR = "sessions_app_conversation"


def _placement(tenant_id: int) -> tuple[int, str, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.shardid, p.nodename, p.nodeport FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid) "
            "JOIN pg_dist_node p ON p.groupid = pl.groupid "
            "WHERE s.shardid = get_shard_id_for_distribution_column(%s, %s)",
            [ANCHOR, tenant_id],
        )
        return cursor.fetchone()


def _allow_citus_output_plugin() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT setting FROM pg_settings WHERE name = 'output_plugin_libraries'")
        row = cursor.fetchone()
        if row is None:
            return  # a server without the setting lets any library decode
        libraries = [name.strip() for name in row[0].split(",") if name.strip()]
        if "citus" in libraries:
            return
        cursor.execute("SELECT current_database()")
        (database,) = cursor.fetchone()
        listed = ", ".join(connection.ops.quote_name(name) for name in [*libraries, "citus"])
        cursor.execute(f"ALTER DATABASE {connection.ops.quote_name(database)} SET output_plugin_libraries = {listed}")


def _other_worker(host: str, port: int) -> tuple[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT node_name, node_port FROM citus_get_active_worker_nodes() ORDER BY node_port")
        return next(node for node in cursor.fetchall() if node != (host, port))


class Agent(threading.Thread):
    """Posts one run after another to one conversation until told to stop, each with a word of its own."""

    def __init__(self, url: str, key: str) -> None:
        super().__init__(daemon=True)
        self.url, self.key = url, key
        self.stop = threading.Event()
        self.answers: list[tuple[int, int, float, float]] = []  # (run number, status, started, answered)

    def run(self) -> None:
        with httpx.Client(timeout=120) as client:
            number = 0
            while not self.stop.is_set() or number < 5:
                messages = weather_messages(f"Weather for trip zqmove{number}?")
                body = {
                    "conversation_id": "conv-moving",
                    "run_id": f"run-move-{number}",
                    "agent": "weather",
                    "step": 1,
                    "state": "complete",
                    "messages": ModelMessagesTypeAdapter.dump_python(messages, mode="json"),
                }
                started = time.monotonic()
                response = client.post(
                    f"{self.url}/api/v1/snapshots",
                    content=json.dumps(body),
                    headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
                )
                self.answers.append((number, response.status_code, started, time.monotonic()))
                number += 1


def test_a_tenant_moves_to_the_other_worker_while_its_agent_writes(live_server, settings):
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = True
    _allow_citus_output_plugin()
    make_tenant("neighbour", "Neighbour")  # shares the shard until the isolation
    tenant = make_tenant("moving", "Moving")
    key = create_api_key(tenant, "server")[1]
    agent = Agent(live_server.url, key)
    agent.start()
    while len(agent.answers) < 3:
        time.sleep(0.05)
    started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT isolate_tenant_to_new_shard(%s, %s, 'CASCADE', shard_transfer_mode => 'block_writes')",
            [ANCHOR, tenant.pk],
        )
        isolated = time.monotonic() - started
        shard, host, port = _placement(tenant.pk)
        target = _other_worker(host, port)
        cursor.execute(
            "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode => 'force_logical')",
            [shard, host, port, *target],
        )
    finished = time.monotonic()
    agent.stop.set()
    agent.join(timeout=300)

    assert _placement(tenant.pk)[1:] == target
    statuses = {status for _, status, _, _ in agent.answers}
    assert statuses == {201}, agent.answers
    posted = len(agent.answers)
    assert Snapshot.objects.filter(tenant=tenant).count() == posted
    assert Run.objects.filter(tenant=tenant).count() == posted
    for number in (0, posted // 2, posted - 1):
        response = run_search(tenant=tenant, query=f"zqmove{number}", scope="tenant")
        assert response.total_matches == 1, number
    print(f"\n{report(agent.answers, started, started + isolated, finished)}")


def report(answers: list[tuple[int, int, float, float]], start: float, split: float, end: float) -> str:
    """The figures docs/SCALING.md quotes: how long each step took and what the agent's POSTs saw meanwhile."""

    def slowest(begin: float, until: float) -> float:
        return max((done - sent for _, _, sent, done in answers if sent < until and done > begin), default=0.0)

    during_move = sum(1 for _, _, _, done in answers if split < done < end)
    return (
        f"Citus tenant move: isolate (block_writes) {split - start:.2f} s, move (force_logical) {end - split:.2f} s; "
        f"{len(answers)} snapshots posted, {during_move} answered during the move; slowest POST overlapping the "
        f"isolation {slowest(start, split):.2f} s, the move {slowest(split, end):.2f} s, overall "
        f"{max(done - sent for _, _, sent, done in answers):.2f} s"
    )
