"""Posting blocks through a transcript's life: new messages, deletes, rewrites, folds between pages, tenants."""

import pytest
from django.core.management import call_command

from search_app import folding, index
from search_app.models import DeletedDocument, PostingBlock, SearchDocument, UnfoldedDocument
from search_app.ranking import block_ranking
from search_app.service import run_search
from sessions_app.models import Conversation, Run, TranscriptEntry
from tests.search_app.factories import add_messages, make_conversation_with


def hits(response) -> list[tuple[int, float]]:
    return [(hit.entry_id, hit.score) for hit in response.results]


def tenant_search(tenant, query: str, **options):
    return run_search(tenant=tenant, query=query, scope="tenant", **options)


@pytest.fixture
def stored(tenant):
    """Two conversations of ordinary words, folded into blocks."""
    make_conversation_with(tenant, [f"deploy the canary build {i}" for i in range(150)], external_id="c1")
    make_conversation_with(tenant, [f"rollback the canary {i} now" for i in range(150)], external_id="c2")
    folding.fold_everything()
    return tenant


@pytest.mark.django_db
def test_new_messages_are_found_before_they_are_folded(stored):
    run = Run.objects.get(conversation__external_id="c1")
    add_messages(run, ["the zephyr canary flew"])
    assert UnfoldedDocument.objects.count() == 1
    response = tenant_search(stored, "zephyr")
    assert response.total_matches == 1 and len(response.results) == 1


@pytest.mark.django_db
def test_a_deleted_message_is_neither_found_nor_counted_and_the_fold_purges_it(stored):
    before = tenant_search(stored, "rollback", limit=25)
    gone = before.results[0].entry_id
    index.entries_removed(stored.id, [gone])
    TranscriptEntry.objects.filter(id=gone).delete()
    assert DeletedDocument.objects.count() == 1
    after = tenant_search(stored, "rollback", limit=25)
    assert gone not in [hit.entry_id for hit in after.results]
    assert after.total_matches == before.total_matches - 1
    folding.fold_tenant(stored.id)
    assert not DeletedDocument.objects.exists()
    assert hits(tenant_search(stored, "rollback", limit=25)) == hits(after)


@pytest.mark.django_db
def test_a_deleted_conversation_leaves_nothing_to_find(stored):
    Conversation.objects.filter(external_id="c2").delete()
    response = tenant_search(stored, "rollback")
    assert response.results == [] and response.total_matches == 0
    assert tenant_search(stored, "canary").total_matches == 150


@pytest.mark.django_db
def test_a_rewritten_conversation_is_searched_as_rewritten(stored):
    conversation = Conversation.objects.get(external_id="c1")
    index.mark_pending(conversation.tenant_id, [conversation.id])
    index.reindex_conversation(conversation.tenant_id, conversation.id)  # what a retention or redaction rewrite does
    assert DeletedDocument.objects.count() == 150
    assert UnfoldedDocument.objects.count() == 150
    unfolded = hits(tenant_search(stored, "deploy canary", limit=25))
    folding.fold_tenant(stored.id)
    assert not DeletedDocument.objects.exists()
    folded = hits(tenant_search(stored, "deploy canary", limit=25))
    assert [key for key, _ in folded] == [key for key, _ in unfolded]
    assert all(abs(a - b) <= 1e-9 for (_, a), (_, b) in zip(folded, unfolded, strict=True))


@pytest.mark.django_db
def test_a_fold_between_two_pages_changes_neither(stored):
    run = Run.objects.get(conversation__external_id="c2")
    add_messages(run, [f"canary canary late {i}" for i in range(30)])
    first = tenant_search(stored, "canary", limit=10)
    second = tenant_search(stored, "canary", limit=10, cursor=first.next_cursor)
    folding.fold_tenant(stored.id)
    assert hits(tenant_search(stored, "canary", limit=10)) == hits(first)
    assert hits(tenant_search(stored, "canary", limit=10, cursor=first.next_cursor)) == hits(second)


@pytest.mark.django_db
def test_messages_arriving_after_the_first_page_stay_off_later_pages_when_folded(stored):
    first = tenant_search(stored, "canary", limit=10)
    second_before = tenant_search(stored, "canary", limit=10, cursor=first.next_cursor)
    run = Run.objects.get(conversation__external_id="c2")
    add_messages(run, [f"canary canary canary {i}" for i in range(200)])
    folding.fold_tenant(stored.id)
    second = tenant_search(stored, "canary", limit=10, cursor=first.next_cursor)
    assert hits(second) == hits(second_before)


@pytest.mark.django_db
def test_a_tenant_never_reads_another_tenants_blocks(stored, other_tenant, monkeypatch):
    make_conversation_with(other_tenant, ["quokka canary secret"] * 5, external_id="x1")
    folding.fold_everything()
    assert tenant_search(stored, "quokka").total_matches == 0
    read = []
    original = block_ranking._Reader.postings

    def spy(self, keys):
        read.extend(keys)
        return original(self, keys)

    monkeypatch.setattr(block_ranking._Reader, "postings", spy)
    tenant_search(stored, "canary quokka")
    theirs = set(PostingBlock.objects.filter(tenant=other_tenant).values_list("id", flat=True))
    assert read and not theirs.intersection(read)


@pytest.mark.django_db
def test_the_commit_that_grows_the_tail_past_its_level_folds_it(tenant, settings, django_capture_on_commit_callbacks):
    settings.SESSIONDESK_SEARCH_FOLD_AT = 20
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = True
    with django_capture_on_commit_callbacks(execute=True):
        make_conversation_with(tenant, [f"message {i}" for i in range(10)], external_id="c1")
    assert not PostingBlock.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        add_messages(Run.objects.get(conversation__external_id="c1"), [f"message {i}" for i in range(10)])
    assert not UnfoldedDocument.objects.exists()
    assert PostingBlock.objects.filter(term="message").count() == 1


@pytest.mark.django_db
def test_reindex_pending_folds_the_tail(tenant):
    make_conversation_with(tenant, ["alpha beta"] * 3, external_id="c1")
    call_command("reindex", "--pending", stdout=None)
    assert not UnfoldedDocument.objects.exists()
    assert PostingBlock.objects.filter(term="alpha").get().count == 3


@pytest.mark.django_db
def test_blocks_of_a_term_never_overlap_after_folds_out_of_order(tenant):
    _, _, entries = make_conversation_with(tenant, [f"w{i % 3} common" for i in range(300)], external_id="c1")
    # Fold the newer half first, as when an older transaction commits after a fold of newer documents.
    older = list(SearchDocument.objects.filter(entry_id__in=[e.id for e in entries[:150]]).values_list("id", flat=True))
    UnfoldedDocument.objects.filter(document_id__in=older).delete()
    folding.fold_tenant(tenant.id)
    UnfoldedDocument.objects.bulk_create([UnfoldedDocument(document_id=key, tenant_id=tenant.id) for key in older])
    # The older half is now the tail: folding it must slot it in before the newer blocks.
    folding.fold_tenant(tenant.id)
    blocks = list(PostingBlock.objects.filter(term="common").order_by("first_document"))
    assert sum(b.count for b in blocks) == 300
    assert all(a.last_document < b.first_document for a, b in zip(blocks, blocks[1:], strict=False))
    assert [b.is_last for b in blocks].count(True) == 1 and blocks[-1].is_last
