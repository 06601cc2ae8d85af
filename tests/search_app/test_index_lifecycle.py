"""The index follows the transcript in the same transaction; what is and is not indexed; reconciliation."""

import importlib

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from model_messages.serialization import load_message
from search_app import folding, index
from search_app.models import ConversationIndex, SearchDocument
from search_app.service import run_search
from sessions_app.ingest.payloads import SnapshotPayload
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, StoredMessage, TranscriptEntry
from sessions_app.transcripts.store import delete_conversations
from tests.search_app.factories import (
    add_messages,
    assistant,
    make_conversation,
    make_run,
    tool_call,
    tool_result,
    user,
)

pytestmark = pytest.mark.django_db


def hits(tenant, query, conversation_id="c", **options):
    return run_search(tenant=tenant, query=query, conversation_id=conversation_id, **options).results


def fts_rows_matching(tenant, term: str) -> int | None:
    """SQLite only: rows of the FTS5 table itself, to prove its triggers followed a delete."""
    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM search_app_fts WHERE search_app_fts MATCH ?", [f'"t{tenant.id}x{term}"'])
        return cursor.fetchone()[0]


def test_new_entries_are_searchable_inside_the_transaction_that_stores_them(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")

    class Abort(Exception):
        pass

    with pytest.raises(Abort), transaction.atomic():
        add_messages(run, ["the puffin arrives"])
        assert [h.position for h in hits(tenant, "puffin")] == [0]
        raise Abort
    assert hits(tenant, "puffin") == []
    assert SearchDocument.objects.count() == 0
    assert fts_rows_matching(tenant, "puffin") in (None, 0)


def test_removed_entries_leave_the_index_and_its_statistics(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")
    entries = add_messages(run, ["tern one", "tern two two", "plover"])
    stats = ConversationIndex.objects.get(conversation=run.conversation)
    assert (stats.documents, stats.total_length) == (3, 6)
    with transaction.atomic():
        index.entries_removed(tenant.id, [entries[1].id])
        TranscriptEntry.objects.filter(id=entries[1].id).delete()
    assert [h.position for h in hits(tenant, "tern")] == [0]
    stats.refresh_from_db()
    assert (stats.documents, stats.total_length) == (2, 3)


def test_deleting_a_conversation_removes_its_index_entries(tenant):
    conversation = make_conversation(tenant, "c")
    add_messages(make_run(conversation, "r"), ["the grebe dives"])
    keep = make_conversation(tenant, "keep")
    add_messages(make_run(keep, "r-keep"), ["another grebe"])
    delete_conversations(Conversation.objects.filter(id=conversation.id))
    assert SearchDocument.objects.filter(conversation_id=conversation.id).count() == 0
    assert fts_rows_matching(tenant, "grebe") in (None, 1)
    assert [h.conversation_id for h in run_search(tenant=tenant, query="grebe", scope="tenant").results] == ["keep"]


def test_the_search_tools_own_calls_and_results_are_never_indexed(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")
    add_messages(
        run,
        [
            "the albatross code is 7731",
            tool_call("search_conversation_history", {"query": "albatross"}),
            tool_result("search_conversation_history", "Found 1 match for 'albatross': the albatross code is 7731"),
            tool_call("read_conversation_context", {"run_id": "r", "position": 0}, call_id="call-2"),
            tool_result("read_conversation_context", "[0] albatross code 7731", call_id="call-2"),
        ],
    )
    assert [h.position for h in hits(tenant, "albatross")] == [0]
    assert SearchDocument.objects.count() == 1


def test_a_message_mixing_the_search_tool_with_another_tool_keeps_the_other_tool_searchable(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")
    mixed = ModelResponse(
        parts=[
            ToolCallPart(tool_name="search_conversation_history", args={"query": "cormorant"}, tool_call_id="a"),
            ToolCallPart(tool_name="weather", args={"city": "Lisbon"}, tool_call_id="b"),
        ]
    )
    add_messages(run, [mixed])
    assert [h.role for h in hits(tenant, "lisbon")] == ["tool_call"]
    assert hits(tenant, "cormorant") == []


def test_reasoning_is_not_indexed_but_the_reply_is(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")
    add_messages(run, [assistant("the answer is 42", thinking="secret musing about the skua")])
    assert hits(tenant, "skua") == []
    assert hits(tenant, "answer")


def test_summary_artifacts_are_not_indexed(tenant):
    conversation = make_conversation(tenant, "c")
    run = make_run(conversation, "r")
    (entry,) = add_messages(run, ["visible shearwater"])
    summary = TranscriptEntry.objects.create(
        tenant=tenant,
        conversation=conversation,
        position=1,
        run=run,
        message=StoredMessage.objects.get(id=entry.message_id),
        role="system",
        text="Summary: shearwater and petrel",
        summary_artifact=True,
    )
    index.entries_added([summary], [load_message(summary.message.data)])
    assert SearchDocument.objects.count() == 1
    assert hits(tenant, "petrel") == []


def test_transcripts_stored_before_the_index_are_reconciled_and_flagged_meanwhile(tenant):
    conversation = make_conversation(tenant, "c")
    add_messages(make_run(conversation, "r"), ["the old booby entry"])
    other = make_conversation(tenant, "other")
    add_messages(make_run(other, "r-other"), ["unrelated booby"])
    # As if stored before the index existed: no documents, no statistics.
    SearchDocument.objects.filter(conversation=conversation).delete()
    ConversationIndex.objects.filter(conversation=conversation).delete()
    importlib.import_module("search_app.migrations.0003_mark_existing_pending").mark_pending(apps, None)

    pending = run_search(tenant=tenant, query="booby", conversation_id="c")
    assert (pending.results, pending.indexing) == ([], True)
    assert run_search(tenant=tenant, query="booby", scope="tenant").indexing is True

    call_command("reindex", "--pending", stdout=open("/dev/null", "w"))
    done = run_search(tenant=tenant, query="booby", conversation_id="c")
    assert ([h.position for h in done.results], done.indexing) == ([0], False)
    assert run_search(tenant=tenant, query="booby", scope="tenant").indexing is False


def test_a_conversation_marked_for_reindexing_flags_only_searches_that_cover_it(tenant):
    first = make_conversation(tenant, "c")
    add_messages(make_run(first, "r"), ["frigatebird"])
    second = make_conversation(tenant, "d")
    add_messages(make_run(second, "r2"), ["frigatebird"])
    folding.fold_tenant(tenant.id)
    index.mark_pending(first.tenant_id, [first.id])
    assert run_search(tenant=tenant, query="frigatebird", conversation_id="c").indexing is True
    assert run_search(tenant=tenant, query="frigatebird", conversation_id="d").indexing is False
    index.reconcile_pending()
    assert run_search(tenant=tenant, query="frigatebird", scope="tenant").indexing is False


def test_reindex_rebuilds_documents_and_statistics_of_one_tenant(tenant, other_tenant):
    conversation = make_conversation(tenant, "c")
    add_messages(make_run(conversation, "r"), ["loon one", "loon two"])
    theirs = make_conversation(other_tenant, "t")
    add_messages(make_run(theirs, "rt"), ["loon theirs"])
    expected = [(h.entry_id, h.score) for h in hits(tenant, "loon")]
    SearchDocument.objects.filter(conversation=conversation).delete()
    ConversationIndex.objects.filter(conversation=conversation).update(documents=99, total_length=1)
    SearchDocument.objects.filter(conversation=theirs).delete()

    call_command("reindex", "--tenant", "acme", stdout=open("/dev/null", "w"))
    assert [(h.entry_id, h.score) for h in hits(tenant, "loon")] == expected
    assert SearchDocument.objects.filter(conversation=theirs).count() == 0


def test_ingested_snapshots_are_searchable_and_a_rewritten_transcript_is_reindexed(tenant):
    first = [user("book the flight to Reykjavik"), ModelResponse(parts=[TextPart(content="Booked REK-4471")])]
    payload = SnapshotPayload(conversation_id="c", run_id="r", agent="travel", state="complete", messages=first)
    ingest_snapshots(tenant, [payload], source="server", via="api")
    assert [h.snippet for h in hits(tenant, "REK-4471")] == ["Booked REK-4471"]

    longer = [*first, user("and a hotel"), ModelResponse(parts=[TextPart(content="Hotel HTL-9 booked")])]
    ingest_snapshots(
        tenant,
        [SnapshotPayload(conversation_id="c", run_id="r", agent="travel", state="complete", messages=longer)],
        source="server",
        via="api",
    )
    assert [h.position for h in hits(tenant, "HTL-9")] == [3]
    assert [h.position for h in hits(tenant, "REK-4471")] == [1]
    assert SearchDocument.objects.count() == TranscriptEntry.objects.filter(summary_artifact=False).count() == 4
    stats = ConversationIndex.objects.get(conversation__external_id="c")
    assert stats.documents == 4
    assert stats.total_length == sum(SearchDocument.objects.values_list("length", flat=True))


def test_a_write_indexes_the_messages_it_holds_without_reading_their_stored_text_back(tenant):
    tenant.redaction_patterns = [r"PIN-\d+"]
    tenant.save()
    messages = [user("my card PIN-4417 and flight FLT-202"), ModelResponse(parts=[TextPart(content="Noted FLT-202")])]
    payload = SnapshotPayload(conversation_id="c", run_id="r", agent="travel", state="complete", messages=messages)
    with CaptureQueriesContext(connection) as statements:
        ingest_snapshots(tenant, [payload], source="server", via="api")
    table = StoredMessage._meta.db_table
    assert not [q["sql"] for q in statements if f'"{table}"."data"' in q["sql"] and q["sql"].startswith("SELECT")]
    assert sorted(h.position for h in hits(tenant, "FLT-202")) == [0, 1]
    assert hits(tenant, "PIN-4417") == [] and hits(tenant, "4417") == []  # masked before it is tokenized


def test_a_very_large_tool_result_is_stored_and_searchable_by_its_beginning(tenant):
    run = make_run(make_conversation(tenant, "c"), "r")
    blob = "needle " + " ".join(f"{i:0100d}" for i in range(6000))  # 600 KB of distinct long terms
    add_messages(run, [tool_result("dump", blob)])
    assert [h.role for h in hits(tenant, "needle")] == ["tool_result"]
