"""What the six gates share: the plain facts of a run (`AuditContext`), the finding they report, loading.

Pure: no ORM here; `sessions_app.audit.service` loads a run's data into an `AuditContext` and stores what
comes out. Findings are content-minimal on purpose: they name tools, hashed tool-call ids and conversation
ids, never tool arguments, tool results or message text.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from sessions_app.audit.vocabulary import VERDICTS, EventClass, Verdict

# Gate names, in the order SPEC section 3 numbers them.
ROUND_TRIP = "round_trip"
AUTHORITY = "authority"
PROMPT_CONTINUITY = "prompt_continuity"
TOOL_PAIRING = "tool_pairing"
APPROVAL = "approval"  # a call waiting for approval: found by the tool-pairing gate, not a repair
CONVERSATION_SCOPE = "conversation_scope"
OUTCOME_RECEIPT = "outcome_receipt"

CLIENT = "client"


@dataclass(frozen=True)
class Finding:
    """One failed check. `key` is stable across re-audits so each finding is recorded once; its event class
    and guidance follow from its verdict code (the vocabulary's table)."""

    gate: str
    code: Verdict
    key: str
    detail: str
    tool_call_hash: str = ""
    tool_name: str = ""
    conversation_id: str = ""

    @property
    def event_class(self) -> EventClass:
        event_class = VERDICTS[self.code].event_class
        if event_class is None:
            raise ValueError(f"{self.code} is the verdict of no finding")
        return event_class

    @property
    def guidance(self) -> str:
        return VERDICTS[self.code].guidance

    def as_dict(self) -> dict[str, str]:
        data = asdict(self)
        data["code"] = self.code.value
        data["class"] = self.event_class.value
        data["guidance"] = self.guidance
        return data


        data["guidance"] = self.guidance
        return data


@dataclass(frozen=True, slots=True)
class ReceiptFact:
    """A receipt the application recorded: the effect it names and how strong its evidence is."""

    effect: str
    evidence: str


@dataclass(frozen=True, slots=True)
class WaitFact:
    """A wait on a person's decision: who decides what, by when, and whether the resume token came back."""

    owner: str
    decision: str
    deadline: datetime
    resolved: bool = False


@dataclass(frozen=True, slots=True)
class PromptContractFact:
    """The agent's prompt contract: its kind (hash, label, dynamic) and the value it is checked by."""

    kind: str
    value: str = ""


@dataclass(frozen=True)
class AuditContext:
    """Everything the gates need besides the messages, as plain data.

    `stored_messages` is the history exactly as stored: one ModelMessagesTypeAdapter JSON element per
    message. `owned_conversation_ids` and `tenant_run_ids` answer, for the conversation ids found in the
    history, which ones this tenant owns and which ones are really run ids; the service looks them up so the
    gate can stay pure. `tool_effects` maps tool-call id to ledger status, or is None when no ledger was
    ingested for the run; `unfinished_effects` are its calls the ledger saw start and never end after the run
    stopped (an effect of unknown outcome after a crash).

    Principals are keyed hashes (never the raw string): `owner_principal_hash` is the conversation's owner
    (its first principal, empty when none was ever given), `run_principal_hashes` the principals this run's
    snapshots were written for, and `replay_principal_hash` the principal a replay is asked for (None when
    this audit is not answering a replay request; "" when the request named no principal).

    `idle_since` is when a run still "running" got its latest snapshot (None for a run that ended); quiet for
    `stuck_after` (the tenant's `stuck_after_hours`), it is STUCK.
    """

    run_id: str
    conversation_id: str
    now: datetime
    stored_messages: tuple[str, ...] = ()
    agent_name: str = ""
    sources: frozenset[str] = frozenset({"server"})
    parent_run_id: str = ""
    parent_conversation_id: str | None = None
    owned_conversation_ids: frozenset[str] = frozenset()
    tenant_run_ids: frozenset[str] = frozenset()
    merged_conversation_ids: frozenset[str] = frozenset()
    prompt_contract: PromptContractFact | None = None
    tool_effects: Mapping[str, str] | None = None
    # Of a run no longer running: tool-call id → tool name of each ledger entry `started` and never ended.
    unfinished_effects: Mapping[str, str] = field(default_factory=dict)
    # Tool-call ids the run ended waiting on for a person's approval (DeferredToolRequests, from OTLP).
    pending_approvals: frozenset[str] = frozenset()
    receipts: tuple[ReceiptFact, ...] = ()
    waits: tuple[WaitFact, ...] = field(default=())
    owner_principal_hash: str = ""
    run_principal_hashes: frozenset[str] = frozenset()
    replay_principal_hash: str | None = None
    idle_since: datetime | None = None
    stuck_after: timedelta = timedelta(hours=24)



def as_items(data: Any) -> list[Any]:
    return data if isinstance(data, list) else [data]


def load_history(stored: Sequence[str]) -> list[ModelMessage]:
    """The messages that validate; an unreadable one is reported by the round-trip gate, not here."""
    items: list[Any] = []
    for raw in stored:
        try:
            items.append(as_items(json.loads(raw)))
        except ValueError:
            continue
    try:
        return ModelMessagesTypeAdapter.validate_python([item for group in items for item in group])
    except ValidationError:
        pass
    messages: list[ModelMessage] = []
    for group in items:  # one bad message must not hide the others from the remaining gates
        try:
            messages.extend(ModelMessagesTypeAdapter.validate_python(group))
        except ValidationError:
            continue
    return messages


def stored_form(messages: Sequence[ModelMessage]) -> tuple[str, ...]:
    """How the store keeps `messages`: one ModelMessagesTypeAdapter JSON element each."""
    return tuple(
        json.dumps(item) for item in ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    )
