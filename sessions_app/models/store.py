"""The session store: every row belongs to a tenant, and tenant_id leads every index queries use."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from sessions_app.models.id_list_field import IdListField


class Role(models.TextChoices):
    SUPPORT = "support", "Support"
    OPERATOR = "operator", "Operator"
    ADMIN = "admin", "Admin"


class Source(models.TextChoices):
    """Who handed us a history: only `server` sources are trusted to replay."""

    SERVER = "server", "Server"
    CLIENT = "client", "Client"


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    retention_days = models.PositiveIntegerField(null=True, blank=True)
    redaction_patterns = models.JSONField(default=list, blank=True)
    stuck_after_hours = models.PositiveIntegerField(
        default=24, help_text="A run still running with no snapshot for this long is STUCK."
    )
    price_overrides = models.JSONField(
        default=dict,
        blank=True,
        help_text="Negotiated prices by model name: USD per million input, output and cache-read tokens "
        "(sessions_app.transcripts.prices); they replace genai-prices' list price for that model.",
    )

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="membership_unique")]


class Invitation(models.Model):
    """A one-time link to join a tenant with a role. The invitee picks their own username (or signs in to an
    account they have), so an admin never names, looks up or learns about anyone outside the tenant."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=16, choices=Role.choices)
    note = models.CharField(max_length=200, blank=True, help_text="Who it is for, in the admin's words.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"], name="invitation_tenant_recent")]


class ApiKey(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    kind = models.CharField(max_length=8, choices=Source.choices)
    label = models.CharField(max_length=200, blank=True)
    prefix = models.CharField(max_length=16, help_text="The first characters, shown to tell keys apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "created_at"], name="apikey_tenant_created")]


class UsageTotals(models.Model):
    """What a transcript's messages add up to, kept at ingest from the rows written, never summed at read time
    (sessions_app.transcripts.list_columns). Plain columns, read by the list, the run page and the read API:

    - `turn_count`: messages carrying a user prompt; `model_step_count`: model responses;
      `tool_call_count`: tool-call parts of those responses;
    - `input_tokens`, `output_tokens`, `total_tokens`: the responses' usage, as the model reported it;
    - `cost_micro_usd`: the priced responses' cost in millionths of a US dollar (genai-prices, or the tenant's
      negotiated price); `unpriced_steps`: responses whose model has no price (shown as "no price", never 0).
    """

    turn_count = models.PositiveIntegerField(default=0)
    model_step_count = models.PositiveIntegerField(default=0)
    tool_call_count = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    cost_micro_usd = models.BigIntegerField(default=0)
    unpriced_steps = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True


class Conversation(UsageTotals):
    """A conversation, with the list's columns kept at ingest (docs/ARCHITECTURE.md, "The conversation list"):
    `first_user_text` (its first user prompt, one line, unmasked: masked when shown), `last_activity_at` (the
    latest of its runs' own times: message timestamps, starts and ends; never the ingest time; its creation
    until it has a run), `run_count`,
    `duration_ms` (the sum of its runs' durations), `worst_verdict` and `worst_verdict_rank` (the gravest stored
    verdict of its runs and its place in the audit's priority order, 0 gravest; blank and 99 before any audit),
    and the `UsageTotals`."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="conversations")
    external_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    message_count = models.PositiveIntegerField(default=0)
    first_user_text = models.CharField(max_length=300, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    run_count = models.PositiveIntegerField(default=0)
    duration_ms = models.BigIntegerField(default=0)
    worst_verdict = models.CharField(max_length=32, blank=True)
    worst_verdict_rank = models.PositiveSmallIntegerField(default=99)
    snapshots_folded = models.PositiveBigIntegerField(
        default=0, help_text="Snapshots the transcript was recovered from: tells a kept recovery it is current."
    )
    owner_principal_hash = models.CharField(
        max_length=64, blank=True, help_text="Keyed hash of the first principal a snapshot named: the owner."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "external_id"], name="conversation_unique_external_id")
        ]
        indexes = [
            models.Index(fields=["tenant", "-updated_at", "-id"], name="conversation_tenant_recent"),
            models.Index(fields=["tenant", "-last_activity_at", "-id"], name="conversation_tenant_activity"),
        ]

    def __str__(self) -> str:
        return self.external_id


class RunState(models.TextChoices):
    RUNNING = "running", "Running"
    COMPLETE = "complete", "Complete"
    INTERRUPTED = "interrupted", "Interrupted"


class Run(UsageTotals):
    """A harness run. Besides the `UsageTotals` of the transcript rows it wrote: `last_activity_at` (its latest
    message time, or its start), `last_snapshot_at` (when its latest snapshot arrived: a running run quiet for
    the tenant's `stuck_after_hours` is STUCK) and `duration_ms` (start to finish, or to its last activity while
    it runs)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="runs")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    run_id = models.CharField(max_length=200)
    agent_name = models.CharField(max_length=200, blank=True)
    parent_run_id = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.SERVER)
    state = models.CharField(max_length=16, choices=RunState.choices, default=RunState.RUNNING)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    last_snapshot_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "run_id"], name="run_unique_run_id")]
        indexes = [
            models.Index(fields=["tenant", "conversation", "started_at"], name="run_tenant_conversation"),
            # The overview reads a tenant's runs by the day they started.
            models.Index(fields=["tenant", "started_at"], name="run_tenant_started"),
        ]

    def __str__(self) -> str:
        return self.run_id


class StoredMessage(models.Model):
    """One distinct serialized message per tenant; snapshots refer to it instead of copying it."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    sha256 = models.CharField(max_length=64, help_text="Hash of the exact serialized message.")
    content_hash = models.CharField(max_length=64, help_text="Hash ignoring fields stamped later.")
    data = models.TextField(help_text="The message as ModelMessagesTypeAdapter JSON (one element).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "sha256"], name="storedmessage_unique_sha")]


class Snapshot(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="snapshots")
    seq = models.PositiveIntegerField(help_text="Write order within the run.")
    step = models.IntegerField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=[("complete", "Complete"), ("interrupted", "Interrupted")])
    source = models.CharField(max_length=8, choices=Source.choices)
    via = models.CharField(max_length=16, help_text="How it arrived: api, live, import or otlp.")
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="The key that wrote it."
    )
    principal_hash = models.CharField(
        max_length=64, blank=True, help_text="Keyed hash of the principal the history was loaded for."
    )
    idempotency_key = models.CharField(max_length=200, blank=True)
    digest = models.CharField(max_length=64, help_text="Hash of the ordered message hashes.")
    message_count = models.PositiveIntegerField()
    # The history in order, as StoredMessage ids: one value per snapshot, so a client that sends its whole history
    # each step writes one row, not a row per message (4,000 rows were 25 to 33 ms of a four-run OTLP export).
    message_ids = IdListField(default=list, help_text="StoredMessage ids of the history, in order.")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "run", "seq"], name="snapshot_unique_seq")]
        indexes = [models.Index(fields=["tenant", "run", "step", "state"], name="snapshot_tenant_run_step")]


class SnapshotMessage(models.Model):
    """Which snapshot of a conversation first named a message (at which position of its history): the index by
    message that retention's still-used check reads. The order of a snapshot's history is `Snapshot.message_ids`.

    A row is written only for a message the conversation's newest snapshot before it did not name, so a thread
    that sends its whole history each step writes its new messages, not its history (the invariant, kept by
    induction: every message a snapshot names has a row of some snapshot of its conversation). No database
    constraint checks its tenant or snapshot: on the partitioned table PostgreSQL 15 ran both checks per row at
    commit (migration 0024). They are written by one code path, in the transaction that writes their snapshot,
    and the ORM's cascade deletes them with it."""

    # The tenant again, as on every tenant-owned row: keys and partitions carry it (docs/SCALING.md).
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="refs", db_constraint=False)
    position = models.PositiveIntegerField()
    message = models.ForeignKey(StoredMessage, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "snapshot", "position"], name="snapshotmessage_unique")
        ]


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    TOOL_CALL = "tool_call", "Tool call"
    TOOL_RESULT = "tool_result", "Tool result"
    SYSTEM = "system", "System"


class TranscriptEntry(models.Model):
    """One message of a conversation's recovered transcript, in order.

    Summary artifacts are kept aside at the position of the message they precede; they are not part of the
    transcript itself (export and search skip them).
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # Indexed with the row id (`transcript_conversation_id`): a reader that kept a conversation's rows reads those
    # written since by id, without scanning its history; deletion's cascade finds a conversation's rows by it too.
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="entries", db_index=False)
    position = models.PositiveIntegerField()
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="entries")
    message = models.ForeignKey(StoredMessage, on_delete=models.PROTECT, related_name="+")
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    text = models.TextField(blank=True)
    timestamp = models.DateTimeField(null=True, blank=True)
    recovered_from_compaction = models.BooleanField(default=False)
    summary_artifact = models.BooleanField(default=False)
    # sessions_app.transcripts.message_facts: kind, time, model, usage and parts without content, for timelines.
    facts = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "conversation", "position"],
                condition=models.Q(summary_artifact=False),
                name="transcript_unique_position",
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "conversation", "position"], name="transcript_tenant_conv_pos"),
            models.Index(fields=["conversation", "id"], name="transcript_conversation_id"),
        ]


class ToolEffect(models.Model):
    """The harness's tool-effect ledger: whether a tool call started, finished or failed (no arguments, no results)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tool_effects")
    tool_call_id = models.CharField(max_length=200)
    tool_name = models.CharField(max_length=200)
    status = models.CharField(max_length=16)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "run", "tool_call_id"], name="tooleffect_unique_call")]
        # Search finds a tool call by its id alone (search_app.identify), across the tenant's runs.
        indexes = [models.Index(fields=["tenant", "tool_call_id"], name="tooleffect_tenant_call")]


class RuntimeSpan(models.Model):
    """A span of the agent's runtime that OTLP carried and the transcript cannot show: a compaction
    (`compact_messages`), an approval review (`review tool approval`) or a tool-call judgement (`judge tool call`).
    `facts` holds only the named attributes of `ingest.otlp.RUNTIME_SPANS` (counts, strategy, decision), never
    tool arguments or message content."""

    class Kind(models.TextChoices):
        COMPACTION = "compaction"
        APPROVAL_REVIEW = "approval_review"
        JUDGE = "judge"
        APPROVAL_PENDING = "approval_pending"  # a call the run ended waiting on (its span's DeferredToolRequests)

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # No database constraint here: on PostgreSQL the migration adds the tenant-qualified one (as review.py does).
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="runtime_spans", db_constraint=False)
    span_key = models.CharField(max_length=200, help_text="otlp:<trace>:<span>: a re-sent export adds nothing.")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    facts = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "run", "span_key"], name="runtimespan_unique_key")]


class LoginGate(models.Model):
    """One row per username tried (a digest, never the name): login attempts for it lock the row, so concurrent
    attempts are checked and counted one after another (sessions_app.tenancy.login_lockout)."""

    key = models.CharField(max_length=64, unique=True)


class HarnessImportCursor(models.Model):
    """How far `import_sessions --harness-postgres` has read one harness PostgresStepStore for one tenant.

    The store's snapshot rows are numbered by an identity `seq`; a row can commit after a higher one was read, so
    besides the highest seq read the cursor keeps the seqs read near it (`recent_seqs`) and the next import looks
    again below it (`sessions_app.ingest.harness_postgres.OVERLAP`).
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    store = models.CharField(max_length=400, help_text="user@host:port/database and table prefix; no password.")
    last_seq = models.BigIntegerField(default=0)
    recent_seqs = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "store"], name="harnesscursor_unique_store")]


class PendingSpan(models.Model):
    """A pydantic-ai span that arrived before its run span (SimpleSpanProcessor exports each span as it ends, so
    a run's model-request and tool spans come first), kept as `ingest.otlp.span_json` until the run span arrives
    (then deleted) or until `ingest.traces.PENDING_SPAN_AGE` has passed (an orphan whose run span never came)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    received_at = models.DateTimeField(default=timezone.now)
    span = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "trace_id", "span_id"], name="pendingspan_unique_span")
        ]
        indexes = [models.Index(fields=["tenant", "received_at"], name="pendingspan_tenant_age")]
