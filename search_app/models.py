"""The search index: one document per indexed transcript entry, and per-conversation statistics.

The full-text structure itself is backend-specific and created by migration 0002 with SQL this app owns:
PostgreSQL keeps a generated `tsv` column with a GIN index on (tenant_id, tsv); SQLite keeps an FTS5 table
whose rows follow this table through triggers. Both index the same `terms` (search_app.tokenize).
"""

from django.db import models

from sessions_app.models import Conversation, Run, Tenant, TranscriptEntry


class SearchDocument(models.Model):
    """One searchable message: its provenance, its index terms and their count (BM25 document length)."""

    # An integer primary key of its own: on SQLite it is the rowid, which the FTS5 table's rows carry.
    id = models.BigAutoField(primary_key=True)
    entry = models.OneToOneField(TranscriptEntry, on_delete=models.CASCADE, related_name="+")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+", db_index=False)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    agent_name = models.CharField(max_length=200, blank=True)
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=16)
    timestamp = models.DateTimeField(null=True, blank=True)
    length = models.PositiveIntegerField(help_text="Number of index terms: the BM25 document length.")
    terms = models.TextField(help_text="Index terms in order, joined by single spaces.")

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "conversation", "position"], name="searchdoc_tenant_conv"),
            models.Index(fields=["tenant", "run"], name="searchdoc_tenant_run"),
        ]

    def __str__(self) -> str:
        return f"search document for entry {self.entry_id}"


class ConversationIndex(models.Model):
    """Per-conversation document count and total length; a tenant's statistics are the sum of its rows.

    One row per conversation (not per tenant) so concurrent writers of different conversations never wait
    on each other, and summing a tenant's rows stays cheap (one row per conversation, not per message).
    `pending` marks a conversation whose index the background reconciliation must rebuild.
    """

    conversation = models.OneToOneField(Conversation, primary_key=True, on_delete=models.CASCADE, related_name="+")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False)
    documents = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)
    pending = models.BooleanField(default=False)
    indexed_at = models.DateTimeField(null=True, blank=True)
    first_document = models.BigIntegerField(
        null=True, blank=True, help_text="At most the lowest id of the conversation's documents; null if unknown."
    )
    last_document = models.BigIntegerField(
        null=True, blank=True, help_text="At least the highest id of the conversation's documents; null if unknown."
    )
    """A range covering every document of the conversation (search_app.ranking.scoped_blocks reads the blocks
    overlapping it): widened by every write, never narrowed by a delete, set afresh by a rebuild. Null while
    unknown (a row without documents, or written before migration 0008 found it), and then not ranked from blocks."""

    class Meta:
        indexes = [models.Index(fields=["tenant", "pending"], name="convindex_tenant_pending")]

    def __str__(self) -> str:
        return f"index statistics of conversation {self.conversation_id}"


class PostingBlock(models.Model):
    """Up to 128 documents of one tenant holding one term (search_app.blocks), for tenant-wide ranking.

    Blocks of a (tenant, term) never overlap in document ids; `is_last` marks the one new documents are appended
    to. Blocks are not kept per conversation: most (term, conversation) pairs hold one or two documents, and a
    row each would cost more than the postings themselves; a conversation or run is ranked from the blocks
    overlapping its documents' ids (search_app.ranking.scoped_blocks), its documents told apart by `conversations`.
    """

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False)
    term = models.CharField(max_length=100)
    first_document = models.BigIntegerField()
    last_document = models.BigIntegerField()
    count = models.PositiveSmallIntegerField()
    is_last = models.BooleanField(default=False)
    postings = models.BinaryField(help_text="Delta-encoded document ids, term frequencies and document lengths.")
    positions = models.BinaryField(help_text="The term's positions in each document, delta-encoded.")
    frontier = models.BinaryField(help_text="Pareto-maximal (tf, length) pairs: the block's exact score bound.")
    conversations = models.BinaryField(help_text="Each document's conversation id, read only to count conversations.")

    class Meta:
        indexes = [models.Index(fields=["tenant", "term", "first_document"], name="postingblock_term")]


class UnfoldedDocument(models.Model):
    """A search document whose postings are not in blocks yet: the tail, scored directly by every search.

    Written by a database trigger (migration 0005) on every insert of a search document, deleted by the fold that
    puts it in blocks. A table of its own rather than a flag on the document: marking a million documents folded
    would rewrite every document row and its GIN entries.
    """

    document_id = models.BigIntegerField(primary_key=True)
    tenant_id = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["tenant_id", "document_id"], name="unfolded_tenant")]


class DeletedDocument(models.Model):
    """A folded document deleted since its blocks were last rewritten: searches skip it and take it out of df.

    Written by a database trigger (migration 0005) on every delete of a search document that is not in the tail,
    whatever code path or cascade deletes it; removed when a fold rewrites the blocks holding it. Plain integers,
    no foreign keys: the tenant may be deleted in the same statement.
    """

    document_id = models.BigIntegerField(primary_key=True)
    tenant_id = models.BigIntegerField()
    terms = models.TextField()

    class Meta:
        indexes = [models.Index(fields=["tenant_id"], name="deleteddoc_tenant")]
