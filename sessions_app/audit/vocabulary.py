"""The audit's vocabulary, one table each: verdicts, audit event classes, evidence levels, prompt contract kinds.

Pure, and a leaf: it imports nothing of the project, so models (their choices), tenancy (the events it records),
the gates, the templates (tone, label) and the stylesheet (colour, checked by a test) all read it from here.
Adding a verdict is one `VERDICTS` row (and its `.s-<slug>` rule in static/css/app.css); the completeness test
tests/sessions_app/audit/test_audit_vocabulary.py fails while any field or the rule is missing.

The verdict order is SPEC section 3's: there is no value in diagnosing a missing deliverable in a history the
caller was never allowed to resume, so authority comes first and the outcome receipt last.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


class EventClass(StrEnum):
    """What an audit event records. The first group is written by audits (one per finding); the second by the
    operations that change who may do what, what is shown or kept, or that let data leave (exports, reveals)."""

    ORPHAN_REMOVED = "orphan_removed"
    INTERRUPTED_SYNTHESIZED = "interrupted_synthesized"
    SCOPE_DRIFT = "scope_drift"
    UNTRUSTED_HISTORY = "untrusted_history"
    PROMPT_GAP = "prompt_gap"
    ROUND_TRIP_MISMATCH = "round_trip_mismatch"
    MISSING_RECEIPT = "missing_receipt"
    WAITING = "waiting"
    STUCK = "stuck"
    EXPORT = "export"
    KEY_CREATED = "key_created"
    KEY_REVOKED = "key_revoked"
    MEMBER_CHANGED = "member_changed"
    CREDENTIAL_REVEALED = "credential_revealed"
    REDACTION_CHANGED = "redaction_changed"
    RETENTION_CHANGED = "retention_changed"
    WAIT_RESOLVED = "wait_resolved"
    REPLAY_ALLOWED = "replay_allowed"
    REPLAY_REFUSED = "replay_refused"
    CONVERSATIONS_MERGED = "conversations_merged"


EVENT_CLASS_LABELS: dict[EventClass, str] = {
    EventClass.ORPHAN_REMOVED: "Orphan result removed",
    EventClass.INTERRUPTED_SYNTHESIZED: "Interrupted return synthesized",
    EventClass.SCOPE_DRIFT: "Scope drift",
    EventClass.UNTRUSTED_HISTORY: "Untrusted history",
    EventClass.PROMPT_GAP: "System prompt gap",
    EventClass.ROUND_TRIP_MISMATCH: "Round trip mismatch",
    EventClass.MISSING_RECEIPT: "Missing outcome receipt",
    EventClass.WAITING: "Waiting",
    EventClass.STUCK: "Stuck",
    EventClass.EXPORT: "Export",
    EventClass.KEY_CREATED: "API key created",
    EventClass.KEY_REVOKED: "API key revoked",
    EventClass.MEMBER_CHANGED: "Member changed",
    EventClass.CREDENTIAL_REVEALED: "Credential revealed",
    EventClass.REDACTION_CHANGED: "Redaction rules changed",
    EventClass.RETENTION_CHANGED: "Retention changed",
    EventClass.WAIT_RESOLVED: "Wait resolved",
    EventClass.REPLAY_ALLOWED: "Replay allowed",
    EventClass.REPLAY_REFUSED: "Replay refused",
    EventClass.CONVERSATIONS_MERGED: "Conversations merged",
}


class Evidence(StrEnum):
    """Evidence levels of an outcome receipt, weakest first. Only OUTCOME proves an effect exists."""

    ACTIVITY = "activity"
    TRANSPORT = "transport"
    OUTCOME = "outcome"


EVIDENCE_LABELS: dict[Evidence, str] = {
    Evidence.ACTIVITY: "Activity (a model said it is done)",
    Evidence.TRANSPORT: "Transport (a tool said accepted)",
    Evidence.OUTCOME: "Outcome (a fresh read of the destination shows the effect)",
}


class ContractKind(StrEnum):
    """What a prompt contract names: a hash or a label of the system prompt, or dynamic instructions."""

    HASH = "hash"
    LABEL = "label"
    DYNAMIC = "dynamic"


CONTRACT_KIND_LABELS: dict[ContractKind, str] = {
    ContractKind.HASH: "SHA-256 of the required system prompt",
    ContractKind.LABEL: "A label the prompt carries",
    ContractKind.DYNAMIC: "Runs on dynamic instructions",
}


class Verdict(StrEnum):
    UNTRUSTED_HISTORY = "UNTRUSTED HISTORY"
    SCOPE_DRIFT = "SCOPE DRIFT"
    ROUND_TRIP_MISMATCH = "ROUND TRIP MISMATCH"
    SYSTEM_PROMPT_GAP = "SYSTEM PROMPT GAP"
    INTERRUPTED_TOOL = "INTERRUPTED TOOL"
    ORPHAN_RESULT_REMOVED = "ORPHAN RESULT REMOVED"
    WAITING = "WAITING"
    STUCK = "STUCK"
    MISSING_OUTCOME_RECEIPT = "MISSING OUTCOME RECEIPT"
    READY = "READY"


Tone = Literal["ok", "warn", "bad"]


@dataclass(frozen=True)
class VerdictRow:
    """Everything shown or recorded for one verdict.

    `tone` is the badge's class (green when fit to replay, amber when waiting on proof, red otherwise);
    `colour` the fill of its chart series and legend swatch, exactly as the `.s-<slug>` rule of app.css writes
    it, distinct for every verdict; `event_class` what an audit finding with this code is logged as (None for
    READY, which is no finding); `guidance` what a person should do next (SPEC section 3).
    """

    label: str
    tone: Tone
    colour: str
    event_class: EventClass | None
    guidance: str


# In priority order, gravest first; READY last. WAITING, STUCK and MISSING OUTCOME RECEIPT are the three answers
# of the last gate; only one of them can appear for a run, so their relative order never decides anything.
# A repair that makes a provider accept a history proves nothing about the world outside it, so the guidance
# never says "retry": it says how to find out first.
VERDICTS: dict[Verdict, VerdictRow] = {
    Verdict.UNTRUSTED_HISTORY: VerdictRow(
        label="Untrusted History",
        tone="bad",
        colour="color-mix(in srgb, var(--bad) 70%, var(--text))",
        event_class=EventClass.UNTRUSTED_HISTORY,
        guidance=(
            "Do not replay this copy. It came from a client, and a client can forge tool calls, tool results, "
            "system prompts and approvals however well-formed they look. Re-load the conversation from the "
            "server-side source (the server's own step snapshots) and resume from that."
        ),
    ),
    Verdict.SCOPE_DRIFT: VerdictRow(
        label="Scope Drift",
        tone="bad",
        colour="var(--info)",
        event_class=EventClass.SCOPE_DRIFT,
        guidance=(
            "Quarantine this history: do not resume it until its scope is reconciled. Split messages back into "
            "their own conversations, or record an explicit merge if they truly belong together; give a fork "
            "its own conversation id; never use a run id as a conversation key."
        ),
    ),
    Verdict.ROUND_TRIP_MISMATCH: VerdictRow(
        label="Round Trip Mismatch",
        tone="bad",
        colour="color-mix(in srgb, var(--info) 60%, var(--bg))",
        event_class=EventClass.ROUND_TRIP_MISMATCH,
        guidance=(
            "The stored history does not survive pydantic-ai's ModelMessagesTypeAdapter unchanged, so a replay "
            "would send something other than what was stored. Re-ingest it from the original source, or inspect"
            " the named field before resuming."
        ),
    ),
    Verdict.SYSTEM_PROMPT_GAP: VerdictRow(
        label="System Prompt Gap",
        tone="bad",
        colour="color-mix(in srgb, var(--accent) 50%, var(--bad))",
        event_class=EventClass.PROMPT_GAP,
        guidance=(
            "Resuming from non-empty history, pydantic-ai assumes the system prompt is already in it, so this "
            "run would continue without the agent's prompt. Restore the prompt (for example with the "
            "ReinjectSystemPrompt capability) or, if the agent's prompt changed on purpose, register its new "
            "prompt contract."
        ),
    ),
    Verdict.INTERRUPTED_TOOL: VerdictRow(
        label="Interrupted Tool",
        tone="bad",
        colour="var(--bad)",
        event_class=EventClass.INTERRUPTED_SYNTHESIZED,
        guidance=(
            "An interrupted call is a signal, not a retry order. Query the destination for the effect first, "
            "using the call's idempotency key; retry only once a fresh read proves the effect absent, with that"
            " same idempotency key, and record an outcome receipt. This history still carries the unsettled "
            "call, so continue from one where it is answered with what you read, not by replaying this one."
        ),
    ),
    Verdict.ORPHAN_RESULT_REMOVED: VerdictRow(
        label="Orphan Result Removed",
        tone="bad",
        colour="color-mix(in srgb, var(--bad) 60%, var(--bg))",
        event_class=EventClass.ORPHAN_REMOVED,
        guidance=(
            "A tool result whose call is missing will be dropped before the next request. Keep this audit "
            "record, and find where the call went (context eviction, a hand-built or client-edited history) "
            "before relying on what the result said."
        ),
    ),
    Verdict.WAITING: VerdictRow(
        label="Waiting",
        tone="warn",
        colour="var(--warn)",
        event_class=EventClass.WAITING,
        guidance=(
            "The run is legitimately waiting for a person's decision. The owner named in the wait record "
            "decides before the deadline and the run resumes with the resume token; nothing to replay "
            "meanwhile."
        ),
    ),
    Verdict.STUCK: VerdictRow(
        label="Stuck",
        tone="bad",
        colour="color-mix(in srgb, var(--warn) 55%, var(--bad))",
        event_class=EventClass.STUCK,
        guidance=(
            "The waiting window closed with neither an outcome nor a new wait. Escalate to the wait's owner, "
            "read the destination to see whether the effect exists, then record an outcome receipt or a new "
            "wait."
        ),
    ),
    Verdict.MISSING_OUTCOME_RECEIPT: VerdictRow(
        label="Missing Outcome Receipt",
        tone="warn",
        colour="color-mix(in srgb, var(--warn) 60%, var(--text))",
        event_class=EventClass.MISSING_RECEIPT,
        guidance=(
            "No proof that the intended effect exists. Read the destination afresh and record an outcome "
            "receipt (evidence 'outcome'); a model saying 'done' is only activity evidence and a tool saying "
            "'accepted' only transport evidence. If the run awaits a human decision, record a wait instead."
        ),
    ),
    Verdict.READY: VerdictRow(
        label="Ready",
        tone="ok",
        colour="var(--ok)",
        event_class=None,
        guidance=(
            "Every gate passed: the history may be resumed as stored. A later snapshot, receipt, wait or "
            "contract is audited afresh, so check the verdict again before each resume."
        ),
    ),
}

PRIORITY: tuple[Verdict, ...] = tuple(verdict for verdict in VERDICTS if verdict is not Verdict.READY)
ALL_VERDICTS: tuple[Verdict, ...] = tuple(VERDICTS)


def choices[E: StrEnum](labels: Mapping[E, str]) -> list[tuple[str, str]]:
    """A table's (value, label) pairs, as model fields and forms take their choices."""
    return [(member.value, label) for member, label in labels.items()]


def decide_verdict(codes: Iterable[str]) -> Verdict:
    """The highest-priority code present, or READY when there is none."""
    present = set(codes)
    unknown = present - set(PRIORITY)
    if unknown:
        raise ValueError(f"Unknown finding code(s): {', '.join(sorted(unknown))}")
    return next((code for code in PRIORITY if code in present), Verdict.READY)


def verdict_rank(verdict: str) -> int:
    """Sort key: graver verdicts first, READY last."""
    return ALL_VERDICTS.index(Verdict(verdict))


def guidance_for(code: str) -> str:
    """What a person should do next about a finding with this verdict code."""
    return VERDICTS[Verdict(code)].guidance


def tone_of(verdict: str) -> Tone:
    """The badge class of a verdict; an unknown one is shown as grave."""
    try:
        return VERDICTS[Verdict(verdict)].tone
    except ValueError:
        return "bad"
