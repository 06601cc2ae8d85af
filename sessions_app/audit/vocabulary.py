"""The audit's vocabulary, one table each: verdicts, audit event classes, evidence levels, prompt contract kinds.

Pure, and a leaf: it imports nothing of the project, so models (their choices), tenancy (the events it records),
the gates, the templates (tone, label) and the stylesheet (colour, checked by a test) all read it from here.
Adding a verdict is one `Verdict` member and its `VERDICTS` row (and its `.s-<slug>` rule in static/css/app.css);
the completeness test tests/sessions_app/audit/test_audit_vocabulary.py fails while any field or the rule is missing.

The verdict order is SPEC section 3's: there is no value in diagnosing a missing deliverable in a history the
caller was never allowed to resume, so authority comes first and the outcome receipt last.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Self


class Labelled(StrEnum):
    """A StrEnum whose members are written `NAME = value, label`: the stored value and how it is shown, in one row."""

    _value_: str
    label: str

    # Runs only while the class is built; afterwards Enum looks members up by value (`Evidence("outcome")`), a
    # call that type checkers read against this signature, hence the default and the explicit check.
    def __new__(cls, value: str, label: str = "") -> Self:
        if not label.strip():
            raise TypeError(f"{cls.__name__} member {value!r} has no label")
        member = str.__new__(cls, value)
        member._value_ = value
        member.label = label
        return member


class EventClass(Labelled):
    """What an audit event records. The first group is written by audits (one per finding); the second by the
    operations that change who may do what, what is shown or kept, or that let data leave (exports, reveals)."""

    ORPHAN_REMOVED = "orphan_removed", "Orphan result removed"
    INTERRUPTED_SYNTHESIZED = "interrupted_synthesized", "Interrupted return synthesized"
    SCOPE_DRIFT = "scope_drift", "Scope drift"
    UNTRUSTED_HISTORY = "untrusted_history", "Untrusted history"
    PROMPT_GAP = "prompt_gap", "System prompt gap"
    ROUND_TRIP_MISMATCH = "round_trip_mismatch", "Round trip mismatch"
    MISSING_RECEIPT = "missing_receipt", "Missing outcome receipt"
    WAITING = "waiting", "Waiting"
    STUCK = "stuck", "Stuck"
    EXPORT = "export", "Export"
    KEY_CREATED = "key_created", "API key created"
    KEY_REVOKED = "key_revoked", "API key revoked"
    MEMBER_CHANGED = "member_changed", "Member changed"
    CREDENTIAL_REVEALED = "credential_revealed", "Credential revealed"
    REDACTION_CHANGED = "redaction_changed", "Redaction rules changed"
    RETENTION_CHANGED = "retention_changed", "Retention changed"
    PRICES_CHANGED = "prices_changed", "Negotiated prices changed"
    STUCK_AFTER_CHANGED = "stuck_after_changed", "Stuck threshold changed"
    WAIT_RESOLVED = "wait_resolved", "Wait resolved"
    REPLAY_ALLOWED = "replay_allowed", "Replay allowed"
    REPLAY_REFUSED = "replay_refused", "Replay refused"
    CONVERSATIONS_MERGED = "conversations_merged", "Conversations merged"
    SCORE_DEFINED = "score_defined", "Score defined"
    SCORE_SET = "score_set", "Score set"
    COMMENT_ADDED = "comment_added", "Comment added"
    COMMENT_EDITED = "comment_edited", "Comment edited"
    COMMENT_DELETED = "comment_deleted", "Comment deleted"
    QUEUE_CHANGED = "queue_changed", "Review queue changed"
    REVIEW_ITEM_CHANGED = "review_item_changed", "Review item changed"
    SHARE_POLICY_CHANGED = "share_policy_changed", "Share-link policy changed"
    SHARE_LINK_CREATED = "share_link_created", "Share link created"
    SHARE_LINK_REVOKED = "share_link_revoked", "Share link revoked"
    SHARE_LINK_VIEWED = "share_link_viewed", "Share link viewed"
    VIEW_SAVED = "view_saved", "Saved view created"
    VIEW_DELETED = "view_deleted", "Saved view deleted"


class Evidence(Labelled):
    """Evidence levels of an outcome receipt, weakest first. Only OUTCOME proves an effect exists."""

    ACTIVITY = "activity", "Activity (a model said it is done)"
    TRANSPORT = "transport", "Transport (a tool said accepted)"
    OUTCOME = "outcome", "Outcome (a fresh read of the destination shows the effect)"


class ContractKind(Labelled):
    """What a prompt contract names: a hash or a label of the system prompt, or dynamic instructions."""

    HASH = "hash", "SHA-256 of the required system prompt"
    LABEL = "label", "A label the prompt carries"
    DYNAMIC = "dynamic", "Runs on dynamic instructions"


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

    @property
    def label(self) -> str:
        """How the verdict is shown: its code in title case ("Round Trip Mismatch")."""
        return self.value.title()


Tone = Literal["ok", "warn", "bad"]


def prose(paragraph: str) -> str:
    """A paragraph written across indented source lines, as one line of single-spaced text."""
    return " ".join(paragraph.split())


@dataclass(frozen=True)
class VerdictRow:
    """Everything shown or recorded for one verdict besides its label (`Verdict.label`).

    `tone` is the badge's class (green when fit to replay, amber when waiting on proof, red otherwise);
    `colour` the fill of its chart series and legend swatch, exactly as the `.s-<slug>` rule of app.css writes
    it, distinct for every verdict; `event_class` what an audit finding with this code is logged as (None for
    READY, which is no finding); `guidance` what a person should do next (SPEC section 3).
    """

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
        "bad", "color-mix(in srgb, var(--bad) 70%, var(--text))", EventClass.UNTRUSTED_HISTORY,
        prose("""
        Do not replay this copy. It came from a client, and a client can forge tool calls, tool results,
        system prompts and approvals however well-formed they look. Re-load the conversation from the
        server-side source (the server's own step snapshots) and resume from that.
        """),
    ),
    Verdict.SCOPE_DRIFT: VerdictRow(
        "bad", "var(--info)", EventClass.SCOPE_DRIFT,
        prose("""
        Quarantine this history: do not resume it until its scope is reconciled. Split messages back into
        their own conversations, or record an explicit merge if they truly belong together; give a fork its
        own conversation id; never use a run id as a conversation key.
        """),
    ),
    Verdict.ROUND_TRIP_MISMATCH: VerdictRow(
        "bad", "color-mix(in srgb, var(--info) 60%, var(--bg))", EventClass.ROUND_TRIP_MISMATCH,
        prose("""
        The stored history does not survive pydantic-ai's ModelMessagesTypeAdapter unchanged, so a replay
        would send something other than what was stored. Re-ingest it from the original source, or inspect
        the named field before resuming.
        """),
    ),
    Verdict.SYSTEM_PROMPT_GAP: VerdictRow(
        "bad", "color-mix(in srgb, var(--accent) 50%, var(--bad))", EventClass.PROMPT_GAP,
        prose("""
        Resuming from non-empty history, pydantic-ai assumes the system prompt is already in it, so this run
        would continue without the agent's prompt. Restore the prompt (for example with the
        ReinjectSystemPrompt capability) or, if the agent's prompt changed on purpose, register its new
        prompt contract.
        """),
    ),
    Verdict.INTERRUPTED_TOOL: VerdictRow(
        "bad", "var(--bad)", EventClass.INTERRUPTED_SYNTHESIZED,
        prose("""
        An interrupted call is a signal, not a retry order. Query the destination for the effect first,
        using the call's idempotency key; retry only once a fresh read proves the effect absent, with that
        same idempotency key, and record an outcome receipt. This history still carries the unsettled call,
        so continue from one where it is answered with what you read, not by replaying this one.
        """),
    ),
    Verdict.ORPHAN_RESULT_REMOVED: VerdictRow(
        "bad", "color-mix(in srgb, var(--bad) 60%, var(--bg))", EventClass.ORPHAN_REMOVED,
        prose("""
        A tool result whose call is missing will be dropped before the next request. Keep this audit record,
        and find where the call went (context eviction, a hand-built or client-edited history) before
        relying on what the result said.
        """),
    ),
    Verdict.WAITING: VerdictRow(
        "warn", "var(--warn)", EventClass.WAITING,
        prose("""
        The run is legitimately waiting for a person's decision. The owner named in the wait record decides
        before the deadline and the run resumes with the resume token; nothing to replay meanwhile.
        """),
    ),
    Verdict.STUCK: VerdictRow(
        "bad", "color-mix(in srgb, var(--warn) 55%, var(--bad))", EventClass.STUCK,
        prose("""
        The run went quiet: a wait's window closed with neither an outcome nor a new wait, or the run is still
        "running" with no snapshot for longer than the tenant allows. Escalate to the wait's owner or the
        agent's operator, read the destination to see whether the effect exists, then record an outcome receipt
        or a new wait; do not resume a history whose run may still be alive.
        """),
    ),
    Verdict.MISSING_OUTCOME_RECEIPT: VerdictRow(
        "warn", "color-mix(in srgb, var(--warn) 60%, var(--text))", EventClass.MISSING_RECEIPT,
        prose("""
        No proof that the intended effect exists. Read the destination afresh and record an outcome receipt
        (evidence 'outcome'); a model saying 'done' is only activity evidence and a tool saying 'accepted'
        only transport evidence. If the run awaits a human decision, record a wait instead.
        """),
    ),
    Verdict.READY: VerdictRow(
        "ok", "var(--ok)", None,
        prose("""
        Every gate passed: the history may be resumed as stored. A later snapshot, receipt, wait or contract
        is audited afresh, so check the verdict again before each resume.
        """),
    ),
}

PRIORITY: tuple[Verdict, ...] = tuple(verdict for verdict in VERDICTS if verdict is not Verdict.READY)
ALL_VERDICTS: tuple[Verdict, ...] = tuple(VERDICTS)


def choices(table: type[Labelled] | type[Verdict]) -> list[tuple[str, str]]:
    """A table's (value, label) pairs, as model fields and forms take their choices."""
    return [(member.value, member.label) for member in table]


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
