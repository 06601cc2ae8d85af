"""Search index maintenance, called inside the transaction that changes a transcript.

`entries_added` / `entries_removed` are the lead's hooks in sessions_app.transcripts.store (same transaction as the
TranscriptEntry rows they follow, so the index never lags the transcript). `reindex_conversation` and
`reconcile_pending` are the reconciliation: conversations stored before the index existed (migration 0003
marks them) or marked with `mark_pending` (e.g. a rewound branch) are rebuilt by the fold worker
(search_app.fold_worker) or `manage.py reindex --pending`; meanwhile searches over them answer `indexing: true`.

What is indexed: the text of each transcript message (user, assistant, tool calls, tool results, system),
rendered without reasoning, media, and the search tools' own calls and results, so past searches never crowd
out what they were looking for. Summary artifacts are not transcript messages and are not indexed.

Masked means unsearchable: the text is redacted (masking: the built-in credential shapes and the
tenant's own patterns) before it is tokenized, so no word, prefix or phrase of a masked value is ever in the
index. A tenant whose patterns do not compile gets nothing indexed (fail closed) until they are fixed. Changing a
tenant's patterns (`tenant_patterns_changed`) marks every conversation of the tenant pending in the same
transaction; a pending conversation is out of every search scope (search_app.service) until it is rebuilt under
the new patterns by the fold worker (search_app.fold_worker) or `manage.py reindex --pending`.

The tenant's patterns are read under its REDACTION lock held shared (PostgreSQL, a transaction-level advisory lock:
sessions_app.tenancy.tenant_locks): a pattern change takes it exclusively before it reads and writes the patterns,
so it waits for writers that masked with the old patterns to commit, and only then marks the tenant's
conversations pending (it sees their documents), while writers that come after it read the new patterns. So no
document masked with old patterns outlives the change. (Not a row lock on the tenant: on Citus the tenant table is
a reference table, where two concurrent `FOR SHARE`s deadlock inside the statement.)
"""

import logging
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BigIntegerField, Case, Count, F, Sum, Value, When
from django.db.models.functions import Greatest, Least
from django.utils import timezone
from pydantic_ai.messages import ModelMessage

from masking import Pattern, compile_rules, redact
from model_messages.rendering import message_text
from model_messages.serialization import load_message
from search_app import folding
from search_app.models import ConversationIndex, SearchDocument
from search_app.tokenize import index_terms
from sessions_app.models import Conversation, Run, StoredMessage, Tenant, TranscriptEntry
from sessions_app.tenancy.tenant_locks import TenantLock, lock_tenants

SEARCH_TOOL_NAMES = ("search_conversation_history", "read_conversation_context")
_CHUNK = 2000
logger = logging.getLogger(__name__)
CONVERSATIONS = ConversationIndex._meta.db_table
RUNS = Run._meta.db_table


def skipped_tools() -> tuple[str, ...]:
    """Tools whose calls and results are never indexed: ours, plus any a deployment adds in settings."""
    return SEARCH_TOOL_NAMES + tuple(settings.SESSIONDESK_SEARCH_SKIP_TOOLS)


def _masking_rules(tenant_ids: Iterable[int]) -> dict[int, tuple[Pattern, ...] | None]:
    """Each tenant's compiled patterns, read under its REDACTION lock held shared until the transaction ends (the
    module's docstring says why); None for patterns that do not compile."""
    ids = sorted(set(tenant_ids))
    lock_tenants(TenantLock.REDACTION, ids, shared=True)
    rules: dict[int, tuple[Pattern, ...] | None] = {}
    for tenant_id, patterns in Tenant.objects.filter(id__in=ids).values_list("id", "redaction_patterns"):
        try:
            rules[tenant_id] = compile_rules(patterns or [])
        except ValueError as error:
            logger.warning("Tenant %s: nothing is indexed while a redaction pattern is unusable: %s", tenant_id, error)
            rules[tenant_id] = None
    return rules


def _documents(
    entries: Sequence[TranscriptEntry], messages: Sequence[ModelMessage] | None = None
) -> list[SearchDocument]:
    """The index rows of `entries`; `messages`: each entry's message where the writer holds it (the rows just
    written), so only entries without one read their stored text back."""
    held = list(zip(entries, messages if messages is not None else [None] * len(entries), strict=True))
    held = [(entry, message) for entry, message in held if not entry.summary_artifact]
    if not held:
        return []
    rules = _masking_rules(e.tenant_id for e, _ in held)
    held = [(entry, message) for entry, message in held if rules.get(entry.tenant_id) is not None]
    tenant_ids = {e.tenant_id for e, _ in held}
    unread = {e.message_id for e, message in held if message is None}
    data = (
        dict(StoredMessage.objects.filter(tenant_id__in=tenant_ids, id__in=unread).values_list("id", "data"))
        if unread
        else {}
    )
    agents = dict(
        Run.objects.filter(tenant_id__in=tenant_ids, id__in={e.run_id for e, _ in held}).values_list("id", "agent_name")
    )
    skipped = skipped_tools()
    documents = []
    for entry, message in held:
        text = message_text(
            message if message is not None else load_message(data[entry.message_id]), skip_tools=skipped
        )
        terms = index_terms(redact(text, rules[entry.tenant_id] or ()))
        if not terms:
            continue
        documents.append(
            SearchDocument(
                entry_id=entry.id,
                tenant_id=entry.tenant_id,
                conversation_id=entry.conversation_id,
                run_id=entry.run_id,
                agent_name=agents.get(entry.run_id, ""),
                position=entry.position,
                role=entry.role,
                timestamp=entry.timestamp,
                length=len(terms),
                terms=" ".join(terms),
            )
        )
    return documents


def _adjust_statistics(
    changes: dict[tuple[int, int], tuple[int, int]],
    sign: int,
    spans: dict[tuple[int, int], tuple[int, int] | None] | None = None,
) -> None:
    """Add (or remove) documents and lengths per conversation: one UPDATE per conversation, not per row.

    `spans` (on adds) holds the lowest and highest new document id per conversation: the row's range covering its
    documents grows to take them in (a row without documents takes theirs; an unknown range stays unknown). A
    delete leaves the range as it is: it still covers every document left.
    """
    if not changes:
        return
    ConversationIndex.objects.bulk_create(
        [ConversationIndex(conversation_id=cid, tenant_id=tid) for cid, tid in changes],
        ignore_conflicts=True,
    )
    now = timezone.now()
    for key, (documents, length) in sorted(changes.items()):
        conversation_id, tenant_id = key
        ranges: dict[str, Case | Value] = {}
        if spans is not None and key in spans and spans[key] is None:
            ranges = {"first_document": Value(None), "last_document": Value(None)}
        elif spans is not None and (span := spans.get(key)) is not None:
            low, high = span
            # Every right-hand side reads the row as it was before this UPDATE.
            ranges = {
                "first_document": Case(
                    When(documents=0, then=Value(low)),
                    When(first_document__isnull=True, then=Value(None)),
                    default=Least(F("first_document"), Value(low)),
                    output_field=BigIntegerField(),
                ),
                "last_document": Case(
                    When(documents=0, then=Value(high)),
                    When(last_document__isnull=True, then=Value(None)),
                    default=Greatest(F("last_document"), Value(high)),
                    output_field=BigIntegerField(),
                ),
            }
        ConversationIndex.objects.filter(tenant_id=tenant_id, conversation_id=conversation_id).update(
            documents=F("documents") + sign * documents,
            total_length=F("total_length") + sign * length,
            indexed_at=now,
            **ranges,
        )


def entries_added(entries: Sequence[TranscriptEntry], messages: Sequence[ModelMessage]) -> None:
    """Index new transcript entries, each with its message (same transaction as their insert)."""
    documents = _documents(entries, messages)
    SearchDocument.objects.bulk_create(documents, batch_size=500)
    changes: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    spans: dict[tuple[int, int], tuple[int, int] | None] = {}
    for document in documents:
        key = (document.conversation_id, document.tenant_id)
        change = changes[key]
        change[0] += 1
        change[1] += document.length
        span = spans.get(key, (document.id, document.id))
        # Both databases return the new ids from a bulk insert; were one missing, the range becomes unknown.
        spans[key] = (
            None if span is None or document.id is None else (min(span[0], document.id), max(span[1], document.id))
        )
    _adjust_statistics({key: (n, length) for key, (n, length) in changes.items()}, +1, spans)
    _fold_after_commit({document.tenant_id for document in documents})


class _FoldCheck:
    """After a commit: fold the tail (and purge tombstones) of the tenants the transaction indexed, where it grew."""

    def __init__(self) -> None:
        self.tenant_ids: set[int] = set()

    def __call__(self) -> None:
        folding.fold_when_due(self.tenant_ids)


_registered = threading.local()


def _fold_after_commit(tenant_ids: set[int]) -> None:
    """One fold check per transaction, however many index writes it makes (an import makes one per conversation).

    The check registered last is reused while it is surely still on the connection's commit list: the list is the
    same object (Django replaces it on commit and on a savepoint's rollback) and the savepoints are the same ones (a
    rollback of the current savepoint drops what it registered). Otherwise a new check is registered; a check too
    many costs one tail-size query, never a missed fold.
    """
    if not tenant_ids:
        return
    last = getattr(_registered, "check", None)
    if (
        last is not None
        and connection.in_atomic_block
        and last[1] is connection.run_on_commit
        and last[2] == set(connection.savepoint_ids)
    ):
        last[0].tenant_ids |= tenant_ids
        return
    check = _FoldCheck()
    check.tenant_ids |= tenant_ids
    if connection.in_atomic_block:
        _registered.check = (check, connection.run_on_commit, set(connection.savepoint_ids))
    transaction.on_commit(check)


def entries_removed(tenant_id: int, entry_ids: Sequence[int]) -> None:
    """Drop index entries of transcript entries about to be deleted (same transaction)."""
    ids = list(entry_ids)
    changes: dict[tuple[int, int], tuple[int, int]] = {}
    for start in range(0, len(ids), _CHUNK):
        documents = SearchDocument.objects.filter(tenant_id=tenant_id, entry_id__in=ids[start : start + _CHUNK])
        for row in documents.values("conversation_id").annotate(n=Count("entry_id"), length=Sum("length")):
            key = (row["conversation_id"], tenant_id)
            before = changes.get(key, (0, 0))
            changes[key] = (before[0] + row["n"], before[1] + row["length"])
        documents.delete()
    _adjust_statistics(changes, -1)
    _fold_after_commit({tenant_id})


def mark_pending(tenant_id: int, conversation_ids: Iterable[int]) -> int:
    """Queue conversations of the tenant for the background reconciliation (their searches say `indexing: true`)."""
    ids = list(conversation_ids)
    ConversationIndex.objects.bulk_create(
        [ConversationIndex(conversation_id=cid, tenant_id=tenant_id) for cid in ids], ignore_conflicts=True
    )
    return ConversationIndex.objects.filter(tenant_id=tenant_id, conversation_id__in=ids).update(pending=True)


def tenant_patterns_changed(tenant_id: int) -> int:
    """Call in the transaction that changes a tenant's redaction patterns: every conversation of the tenant with a
    transcript goes pending (out of search until rebuilt); the fold worker (search_app.fold_worker) rebuilds them,
    one worker per tenant at a time, one conversation per transaction, so a stopped worker's next start resumes."""
    ids = TranscriptEntry.objects.filter(tenant_id=tenant_id).values_list("conversation_id", flat=True).distinct()
    return mark_pending(tenant_id, ids)


def reindex_conversation(owner: int, conversation_id: int) -> int:
    """Rebuild one conversation of the tenant `owner` from its transcript; returns documents indexed."""
    with transaction.atomic():
        if not Conversation.objects.filter(tenant_id=owner, id=conversation_id).exists():
            # Deleted meanwhile, with its documents.
            ConversationIndex.objects.filter(tenant_id=owner, conversation_id=conversation_id).delete()
            return 0
        entries = TranscriptEntry.objects.filter(
            tenant_id=owner, conversation_id=conversation_id, summary_artifact=False
        )
        SearchDocument.objects.filter(tenant_id=owner, conversation_id=conversation_id).delete()
        documents: list[SearchDocument] = []
        batch: list[TranscriptEntry] = []
        has_transcript = False
        for entry in entries.order_by("position").iterator(chunk_size=_CHUNK):
            has_transcript = True
            batch.append(entry)
            if len(batch) == _CHUNK:
                documents.extend(_documents(batch))
                batch = []
        documents.extend(_documents(batch))
        SearchDocument.objects.bulk_create(documents, batch_size=500)
        ids = [d.id for d in documents]
        stats = {
            "documents": len(documents),
            "total_length": sum(d.length for d in documents),
            "first_document": min(ids, default=None),
            "last_document": max(ids, default=None),
        }
        if not has_transcript:
            ConversationIndex.objects.filter(tenant_id=owner, conversation_id=conversation_id).delete()
        else:
            ConversationIndex.objects.update_or_create(
                tenant_id=owner,
                conversation_id=conversation_id,
                defaults={**stats, "pending": False, "indexed_at": timezone.now()},
            )
            _fold_after_commit({owner})
    return len(documents)


def reconcile_pending(tenant_ids: Sequence[int] | None = None, limit: int | None = None) -> tuple[int, int]:
    """The background pass: rebuild every pending conversation (of `tenant_ids`); (conversations, documents)."""
    pending = ConversationIndex.objects.filter(pending=True)
    if tenant_ids is not None:
        pending = pending.filter(tenant_id__in=tenant_ids)
    ids = list(pending.order_by("conversation_id").values_list("tenant_id", "conversation_id")[:limit])
    documents = sum(reindex_conversation(tid, cid) for tid, cid in ids)
    if tenant_ids is None:
        folding.fold_everything()
    else:
        for tenant_id in tenant_ids:
            folding.fold_tenant(tenant_id)
    return len(ids), documents


def reindex_all(tenant_ids: Sequence[int] | None = None) -> tuple[int, int]:
    """Rebuild every conversation that has a transcript (of `tenant_ids`); (conversations, documents)."""
    entries = TranscriptEntry.objects.all()
    if tenant_ids is not None:
        entries = entries.filter(tenant_id__in=tenant_ids)
    ids = sorted(set(entries.values_list("tenant_id", "conversation_id").distinct()))
    documents = sum(reindex_conversation(tid, cid) for tid, cid in ids)
    return len(ids), documents


@dataclass(frozen=True, slots=True)
class IndexState:
    """What of a search's scope the index has not caught up with yet."""

    pending: bool = False
    """A conversation waits for a rebuild (masking patterns changed, a rewound branch): it is left out."""
    unfolded: bool = False
    """A document is still in the tail, not in posting blocks: searched all the same, but more slowly."""

    @property
    def indexing(self) -> bool:
        return self.pending or self.unfolded


def index_state(tenant_ids: Sequence[int], conversation_id: int | None = None, run_id: int | None = None) -> IndexState:
    """Whether anything of the scope (the tenants, or one conversation or run of them) is pending or unfolded, in
    one statement, both by index: pending conversations by (tenant, pending); the tail by tenant, or a
    conversation's or run's documents by their own index, joined to the tail by its primary key."""
    tenants = ", ".join(["%s"] * len(tenant_ids))
    pending = f"SELECT 1 FROM {CONVERSATIONS} c WHERE c.tenant_id IN ({tenants}) AND c.pending"  # noqa: S608 - constant tables, bound values
    unfolded = f"SELECT 1 FROM {folding.TAIL} t WHERE t.tenant_id IN ({tenants})"  # noqa: S608 - constant tables, bound values
    pending_params: list[int] = [*tenant_ids]
    unfolded_params: list[int] = [*tenant_ids]
    if conversation_id is not None or run_id is not None:
        if conversation_id is not None:
            pending += " AND c.conversation_id = %s"
            pending_params.append(conversation_id)
            narrow, value = "conversation_id", conversation_id
        elif run_id is not None:
            # A run's conversation: even one whose documents are not written yet (stored before the index).
            run = f"SELECT r.conversation_id FROM {RUNS} r WHERE r.tenant_id IN ({tenants}) AND r.id = %s"  # noqa: S608 - constant tables, bound values
            pending += f" AND c.conversation_id IN ({run})"
            pending_params += [*tenant_ids, run_id]
            narrow, value = "run_id", run_id
        documents = f"SELECT d.id FROM {folding.DOCS} d WHERE d.tenant_id IN ({tenants}) AND d.{narrow} = %s"  # noqa: S608 - constant tables, bound values
        unfolded += f" AND t.document_id IN ({documents})"
        unfolded_params += [*tenant_ids, value]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS ({pending}), EXISTS ({unfolded})", [*pending_params, *unfolded_params])
        is_pending, is_unfolded = cursor.fetchone()
    return IndexState(bool(is_pending), bool(is_unfolded))
