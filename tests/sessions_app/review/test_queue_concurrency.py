"""Reviewers taking the next item of one queue at the same moment get different items, and two finishing the same
item at once record it once (PostgreSQL, real concurrent connections)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from sessions_app.dashboard.filter_urls import conversations_for
from sessions_app.models import ItemState, ReviewItem
from sessions_app.review import queues
from tests.factories import make_member, make_tenant
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan

REVIEWERS = 4


def _at_once(count, act):
    start = threading.Barrier(count)

    def run(index):
        start.wait()
        try:
            return act(index)
        finally:
            connection.close()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent takers need PostgreSQL's row locks")
def test_reviewers_taking_at_once_get_different_items():
    tenant = make_tenant("acme", "Acme")
    for n in range(REVIEWERS):
        ingest_plan(tenant, quiet_plan(), f"conv-{n}")
    reviewers = [make_member(tenant, "support", f"reviewer{n}") for n in range(REVIEWERS)]
    queue = queues.create_queue(tenant, "all", "/conversations/", actor=reviewers[0], select=conversations_for)
    for _ in range(3):
        ReviewItem.objects.filter(queue=queue).update(state=ItemState.OPEN, reviewer=None)
        taken = _at_once(REVIEWERS, lambda i: queues.take_next(tenant, queue, reviewers[i]))
        assert all(item is not None for item in taken)
        assert len({item.pk for item in taken}) == REVIEWERS
        assert ReviewItem.objects.filter(queue=queue, state=ItemState.TAKEN).count() == REVIEWERS


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent finishers need PostgreSQL's row locks")
def test_two_reviewers_finishing_one_open_item_at_once_record_it_once():
    tenant = make_tenant("acme", "Acme")
    ingest_plan(tenant, quiet_plan(), "conv-0")
    reviewers = [make_member(tenant, "support", f"reviewer{n}") for n in range(2)]
    queue = queues.create_queue(tenant, "all", "/conversations/", actor=reviewers[0], select=conversations_for)
    item = queue.items.get()

    def finish(index):
        try:
            queues.mark_done(tenant, item, reviewers[index])
        except Exception as error:  # the refusal the loser gets
            return getattr(error, "status", repr(error))
        return 200

    assert sorted(_at_once(2, finish)) == [200, 409]
    assert ReviewItem.objects.get(pk=item.pk).state == ItemState.DONE
