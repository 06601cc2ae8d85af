"""On Citus, a tenant moves online: isolated to a shard of its own and that shard moved to the other worker while
an agent keeps posting snapshots to it; no write is lost or answered 5xx, and its search is exact afterwards."""

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
        self.answers: list[tuple[int, int, float]] = []  # (run number, status, seconds)

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
                self.answers.append((number, response.status_code, time.monotonic() - started))
                number += 1


def test_a_tenant_moves_to_the_other_worker_while_its_agent_writes(live_server, settings):
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = True
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
            "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode => 'block_writes')",
            [shard, host, port, *target],
        )
    moved = time.monotonic() - started - isolated
    during = len(agent.answers)
    agent.stop.set()
    agent.join(timeout=300)

    assert _placement(tenant.pk)[1:] == target
    statuses = {status for _, status, _ in agent.answers}
    assert statuses == {201}, agent.answers
    posted = len(agent.answers)
    assert Snapshot.objects.filter(tenant=tenant).count() == posted
    assert Run.objects.filter(tenant=tenant).count() == posted
    for number in (0, posted // 2, posted - 1):
        response = run_search(tenant=tenant, query=f"zqmove{number}", scope="tenant")
        assert response.total_matches == 1, number
    slowest = max(seconds for _, _, seconds in agent.answers)
    print(
        f"\nCitus tenant move: isolate {isolated:.2f} s, move {moved:.2f} s, {posted} snapshots posted "
        f"({during} before the move ended), slowest POST {slowest:.2f} s"
    )
