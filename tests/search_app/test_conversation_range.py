"""A conversation's statistics row keeps a range covering every one of its documents (the scoped block ranker reads
the blocks overlapping it): widened by every write, kept by deletes, set afresh by a rebuild, unknown stays
unknown; a conversation spread too thin is left to the other rankers, with the same answers."""

import pytest
from django.db.models import Max, Min

from search_app import index
from search_app.models import ConversationIndex, SearchDocument
from search_app.ranking import scoped_blocks
from search_app.service import run_search
from sessions_app.models import TranscriptEntry
from tests.search_app.factories import add_messages, make_conversation, make_run


def _covers(conversation_id: int) -> tuple[int, int]:
    row = ConversationIndex.objects.get(conversation_id=conversation_id)
    ids = SearchDocument.objects.filter(conversation_id=conversation_id).aggregate(low=Min("id"), high=Max("id"))
    assert row.first_document is not None and row.last_document is not None
    assert row.first_document <= ids["low"] and ids["high"] <= row.last_document
    return row.first_document, row.last_document


@pytest.mark.django_db
def test_the_range_follows_writes_deletes_and_rebuilds(tenant):
    first = make_run(make_conversation(tenant, "first"), "run-first")
    other = make_run(make_conversation(tenant, "other"), "run-other")
    add_messages(first, ["alpha one", "alpha two"])
    low, high = _covers(first.conversation_id)
    add_messages(other, ["beta"] * 3)
    add_messages(first, ["alpha three"])  # after the other conversation's: the range widens over its documents
    low2, high2 = _covers(first.conversation_id)
    assert low2 == low and high2 > high
    entries = list(TranscriptEntry.objects.filter(conversation_id=first.conversation_id).order_by("id"))
    index.entries_removed(tenant.id, [entries[-1].id])
    TranscriptEntry.objects.filter(id=entries[-1].id).delete()
    assert _covers(first.conversation_id) == (low2, high2)  # a delete keeps a range that still covers the rest
    index.reindex_all([tenant.id])  # new ids: the range is theirs
    _covers(first.conversation_id)
    row = ConversationIndex.objects.get(conversation_id=first.conversation_id)
    assert row.first_document > high2 - 1


@pytest.mark.django_db
def test_an_unknown_range_stays_unknown_and_is_searched_by_the_other_rankers(tenant):
    run = make_run(make_conversation(tenant, "legacy"), "run-legacy")
    add_messages(run, ["gamma delta", "gamma"])
    rows = ConversationIndex.objects.filter(conversation_id=run.conversation_id)
    rows.update(first_document=None, last_document=None)
    add_messages(run, ["gamma again"])  # a write to a row of unknown range does not make it look known
    row = ConversationIndex.objects.get(conversation_id=run.conversation_id)
    assert row.first_document is None and row.last_document is None
    response = run_search(tenant=tenant, query="gamma", conversation_id="legacy")
    assert response.total_matches == 3


@pytest.mark.django_db
def test_a_conversation_spread_thin_is_ranked_elsewhere_alike(tenant, monkeypatch):
    sparse = make_run(make_conversation(tenant, "sparse"), "run-sparse")
    busy = make_run(make_conversation(tenant, "busy"), "run-busy")
    for turn in range(6):
        add_messages(sparse, [f"needle turn{turn} hay"])
        add_messages(busy, ["needle hay hay"] * 20)
    scoped = run_search(tenant=tenant, query="needle hay", conversation_id="sparse")
    monkeypatch.setattr(scoped_blocks, "SPREAD", 0)
    monkeypatch.setattr(scoped_blocks, "SLACK", 0)  # now too spread: the SQL or candidate ranker takes it
    elsewhere = run_search(tenant=tenant, query="needle hay", conversation_id="sparse")
    assert scoped.total_matches == elsewhere.total_matches == 6
    assert [(h.entry_id, round(h.score, 12)) for h in scoped.results] == [
        (h.entry_id, round(h.score, 12)) for h in elsewhere.results
    ]
