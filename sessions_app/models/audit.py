"""Replay-audit records: receipts, waits, prompt contracts, merges, the stored verdict and the audit log.

None of these hold message content. Receipts hold a reference or digest of the destination, waits a hashed
resume token, prompt contracts a hash or label (never the prompt), and audit events ids and a class only.
"""


from typing import Any, NoReturn

from django.db import models

from sessions_app.audit import vocabulary
from sessions_app.models.store import Conversation, Run, Tenant


class RunEvidence(models.Model):
    """A receipt's and a wait's common base: a tenant's record about one run. Each names its own `run` field, since
    the migrations record the reverse names ("receipts", "waits") as written, not as a `%(class)s` template."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")

    class Meta:
        abstract = True


class Receipt(RunEvidence):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="receipts")
    effect = models.CharField(max_length=200, help_text="The intended effect, e.g. 'invoice-email-sent'.")
    evidence = models.CharField(max_length=16, choices=vocabulary.choices(vocabulary.Evidence))
    checked_by = models.CharField(max_length=200, help_text="Who or what performed the check.")
    reference = models.CharField(
        max_length=500, blank=True, help_text="A reference or digest of the destination, never its contents."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "run", "created_at"], name="receipt_tenant_run")]

    def __str__(self) -> str:
        return f"{self.effect}: {self.evidence}"


class Wait(RunEvidence):
    """A run legitimately waiting for a person's decision until a deadline."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="waits")
    owner = models.CharField(max_length=200)
    decision = models.CharField(max_length=500, help_text="The decision needed, in a sentence.")
    deadline = models.DateTimeField()
    resume_token_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=200, blank=True, help_text="Who presented the resume token.")

    class Meta:
        indexes = [models.Index(fields=["tenant", "run", "deadline"], name="wait_tenant_run_deadline")]

    def __str__(self) -> str:
        return f"wait for {self.owner} until {self.deadline:%Y-%m-%d %H:%M}"


class PromptContract(models.Model):
    """What the history of an agent's runs must carry: a non-secret identifier, never the prompt text."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    agent_name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=vocabulary.choices(vocabulary.ContractKind))
    value = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "agent_name"], name="promptcontract_unique_agent")]

    def __str__(self) -> str:
        return f"{self.agent_name}: {self.kind}"


class ConversationMerge(models.Model):
    """An explicit record that messages of another conversation id belong to this conversation."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="merges")
    merged_external_id = models.CharField(max_length=200)
    actor = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "conversation", "merged_external_id"], name="conversationmerge_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.merged_external_id} merged into conversation {self.conversation_id}"


class RunVerdict(models.Model):
    """The current audit verdict of one run, kept up to date so lists can filter by it."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="verdict")
    verdict = models.CharField(max_length=32, choices=vocabulary.choices(vocabulary.Verdict))
    findings = models.JSONField(default=list)
    repair_count = models.PositiveIntegerField(default=0, help_text="Tool-pairing findings among them.")
    updated_at = models.DateTimeField()
    recheck_at = models.DateTimeField(
        null=True, blank=True, help_text="When the verdict changes by itself (a wait's deadline)."
    )

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "verdict", "-updated_at"], name="runverdict_tenant_verdict"),
            models.Index(fields=["recheck_at"], name="runverdict_recheck"),
            models.Index(
                fields=["tenant", "-updated_at"],
                name="runverdict_tenant_repairs",
                condition=models.Q(repair_count__gt=0),
            ),
        ]

    def __str__(self) -> str:
        return self.verdict


APPEND_ONLY = "Audit events are append-only."


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    """Append-only: bulk updates and deletes are refused (a tenant's deletion still cascades)."""

    def update(self, **kwargs: Any) -> NoReturn:
        raise TypeError(APPEND_ONLY)

    def delete(self) -> NoReturn:
        raise TypeError(APPEND_ONLY)


class AuditEvent(models.Model):
    """One content-minimal, append-only audit record.

    Ids are kept as plain strings, not foreign keys, so the log outlives the runs it talks about.
    `finding_key` makes each audit finding recorded once per run however often the run is re-audited.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    event_class = models.CharField(max_length=32, choices=vocabulary.choices(vocabulary.EventClass))
    conversation_id = models.CharField(max_length=200, blank=True)
    run_id = models.CharField(max_length=200, blank=True)
    tool_call_hash = models.CharField(max_length=64, blank=True)
    observed_at = models.DateTimeField()
    actor = models.CharField(max_length=200, blank=True)
    finding_key = models.CharField(max_length=200, blank=True)
    verdict = models.CharField(max_length=32, blank=True, help_text="The verdict a replay request was answered with.")
    principal_hash = models.CharField(
        max_length=64, blank=True, help_text="Keyed hash of the principal a replay was asked for, never the principal."
    )
    subject = models.CharField(
        max_length=200, blank=True, help_text="What an admin action changed, by id ('saved_view:12'), never by content."
    )

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "run_id", "finding_key"],
                condition=~models.Q(finding_key=""),
                name="auditevent_unique_finding",
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "-observed_at", "-id"], name="auditevent_tenant_recent"),
            models.Index(fields=["tenant", "event_class", "-observed_at"], name="auditevent_tenant_class"),
            models.Index(fields=["tenant", "run_id"], name="auditevent_tenant_run"),
        ]

    def __str__(self) -> str:
        return f"{self.event_class} {self.run_id}".strip()

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise TypeError(APPEND_ONLY)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(APPEND_ONLY)
