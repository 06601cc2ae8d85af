"""The six replay gates of SPEC section 3, as pure functions over pydantic-ai messages and a plain context.

No ORM here: `sessions_app.audit.service` loads a run's data into an `AuditContext` and stores what comes out.
Every gate runs on every audit and every finding is kept; `verdict.decide_verdict` picks the one to show.

Findings are content-minimal on purpose: they name tools, hashed tool-call ids and conversation ids, never
tool arguments, tool results or message text.
"""

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, TypeGuard

from pydantic import ValidationError
from pydantic_ai.messages import (
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    ToolReturnPart,
    repair_messages,
)

from sessions_app.audit import verdict as v
from sessions_app.audit.digests import hash_tool_call_id, prompt_sha256, sha256_hex
from sessions_app.audit.guidance import guidance_for

# Gate names, in the order SPEC section 3 numbers them.
ROUND_TRIP = "round_trip"
AUTHORITY = "authority"
PROMPT_CONTINUITY = "prompt_continuity"
TOOL_PAIRING = "tool_pairing"
CONVERSATION_SCOPE = "conversation_scope"
OUTCOME_RECEIPT = "outcome_receipt"
GATES: tuple[str, ...] = (
    ROUND_TRIP,
    AUTHORITY,
    PROMPT_CONTINUITY,
    TOOL_PAIRING,
    CONVERSATION_SCOPE,
    OUTCOME_RECEIPT,
)

# Audit event classes. The first group is written by audits (one per finding); the second by the
# operations that change who may do what, what is shown or kept, or that let data leave (exports, reveals).
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
EVENT_CLASSES: tuple[str, ...] = (
    ORPHAN_REMOVED,
    INTERRUPTED_SYNTHESIZED,
    SCOPE_DRIFT,
    UNTRUSTED_HISTORY,
    PROMPT_GAP,
    ROUND_TRIP_MISMATCH,
    MISSING_RECEIPT,
    WAITING,
    STUCK,
    EXPORT,
    KEY_CREATED,
    KEY_REVOKED,
    MEMBER_CHANGED,
    CREDENTIAL_REVEALED,
    REDACTION_CHANGED,
    RETENTION_CHANGED,
    WAIT_RESOLVED,
    REPLAY_ALLOWED,
    REPLAY_REFUSED,
)

# Evidence levels of an outcome receipt, weakest first. Only OUTCOME proves an effect exists.
ACTIVITY = "activity"  # a model said it is done
TRANSPORT = "transport"  # a tool said the request was accepted
OUTCOME = "outcome"  # a fresh read of the destination shows the effect
EVIDENCE_LEVELS: tuple[str, ...] = (ACTIVITY, TRANSPORT, OUTCOME)

# Prompt contract kinds.
CONTRACT_HASH = "hash"
CONTRACT_LABEL = "label"
CONTRACT_DYNAMIC = "dynamic"
CONTRACT_KINDS: tuple[str, ...] = (CONTRACT_HASH, CONTRACT_LABEL, CONTRACT_DYNAMIC)

CLIENT = "client"


@dataclass(frozen=True)
class Finding:
    """One failed check. `key` is stable across re-audits so each finding is recorded once."""

    gate: str
    code: str
    event_class: str
    key: str
    detail: str
    tool_call_hash: str = ""
    tool_name: str = ""
    conversation_id: str = ""

    @property
    def guidance(self) -> str:
        return guidance_for(self.code)

    def as_dict(self) -> dict[str, str]:
        data = asdict(self)
        data["class"] = data.pop("event_class")
        data["guidance"] = self.guidance
        return data


@dataclass(frozen=True)
class ReceiptFact:
    effect: str
    evidence: str


@dataclass(frozen=True)
class WaitFact:
    owner: str
    decision: str
    deadline: datetime
    resolved: bool = False


@dataclass(frozen=True)
class PromptContractFact:
    kind: str
    value: str = ""


@dataclass(frozen=True)
class AuditContext:
    """Everything the gates need besides the messages, as plain data.

    `stored_messages` is the history exactly as stored: one ModelMessagesTypeAdapter JSON element per
    message. `owned_conversation_ids` and `tenant_run_ids` answer, for the conversation ids found in the
    history, which ones this tenant owns and which ones are really run ids; the service looks them up so the
    gate can stay pure. `tool_effects` maps tool-call id to ledger status, or is None when no ledger was
    ingested for the run.

    Principals are keyed hashes (never the raw string): `owner_principal_hash` is the conversation's owner
    (its first principal, empty when none was ever given), `run_principal_hashes` the principals this run's
    snapshots were written for, and `replay_principal_hash` the principal a replay is asked for (None when
    this audit is not answering a replay request; "" when the request named no principal).
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
    receipts: tuple[ReceiptFact, ...] = ()
    waits: tuple[WaitFact, ...] = field(default=())
    owner_principal_hash: str = ""
    run_principal_hashes: frozenset[str] = frozenset()
    replay_principal_hash: str | None = None


# ---- loading -------------------------------------------------------------------------------------------


def _as_items(data: Any) -> list[Any]:
    return data if isinstance(data, list) else [data]


def load_history(stored: Sequence[str]) -> list[ModelMessage]:
    """The messages that validate; an unreadable one is reported by the round-trip gate, not here."""
    items: list[Any] = []
    for raw in stored:
        try:
            items.append(_as_items(json.loads(raw)))
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


# ---- gate 1: round trip --------------------------------------------------------------------------------


def _without_nulls(value: Any) -> Any:
    """Normalization: an absent key and a null one mean the same to the adapter."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(_without_nulls(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _first_difference(stored: Any, again: Any, path: str = "") -> str:
    """The JSON path where two values first differ: a location, never the values themselves."""
    if isinstance(stored, dict) and isinstance(again, dict):
        for key in sorted(set(stored) | set(again)):
            if key not in again:
                return f"{path}.{key} (dropped by the adapter)"
            if key not in stored:
                return f"{path}.{key} (added by the adapter)"
            if _canonical(stored[key]) != _canonical(again[key]):
                return _first_difference(stored[key], again[key], f"{path}.{key}")
    if isinstance(stored, list) and isinstance(again, list):
        if len(stored) != len(again):
            return f"{path} (length {len(stored)} became {len(again)})"
        for index, (left, right) in enumerate(zip(stored, again, strict=True)):
            if _canonical(left) != _canonical(right):
                return _first_difference(left, right, f"{path}[{index}]")
    return path or "(whole message)"


def _validation_location(error: ValidationError) -> str:
    first = error.errors()[0]
    return ".".join(str(item) for item in first["loc"]) + f" ({first['type']})"


def _round_trip_problem(stored: Any) -> str | None:
    """Why one stored message does not survive the adapter, or None when it does."""
    try:
        loaded = ModelMessagesTypeAdapter.validate_python(stored)
    except ValidationError as error:
        return f"does not validate as a ModelMessage at {_validation_location(error)}"
    dumped = ModelMessagesTypeAdapter.dump_python(loaded, mode="json")
    again = ModelMessagesTypeAdapter.dump_python(ModelMessagesTypeAdapter.validate_python(dumped), mode="json")
    if sha256_hex(_canonical(stored)) == sha256_hex(_canonical(again)):
        return None
    return f"re-serializes differently at {_first_difference(_without_nulls(stored), _without_nulls(again))}"


def check_round_trip(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 1: dump with ModelMessagesTypeAdapter, validate back, normalize, hash; compare with the stored."""
    parsed: list[Any] = []
    problems: dict[int, str] = {}
    for index, raw in enumerate(ctx.stored_messages):
        try:
            parsed.append(_as_items(json.loads(raw)))
        except ValueError:
            parsed.append(None)
            problems[index] = "is not JSON"
    # Fast path: the whole history in one dump and one validate-back; a message whose dump equals what is
    # stored needs no normalizing or hashing. Only the others are examined one by one.
    readable = [index for index, items in enumerate(parsed) if items is not None]
    items = [item for i in readable for item in parsed[i]]
    try:
        if len(items) != len(messages):
            raise ValueError("the messages were not loaded from these stored messages")
        dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
        if ModelMessagesTypeAdapter.validate_python(dumped) != list(messages):
            raise ValueError("the dump does not validate back to the same messages")
    except (ValueError, ValidationError):
        suspects = readable
    else:
        suspects, offset = [], 0
        for index in readable:
            count = len(parsed[index])
            if dumped[offset : offset + count] != parsed[index]:
                suspects.append(index)
            offset += count
    for index in suspects:
        problem = _round_trip_problem(parsed[index])
        if problem:
            problems[index] = problem
    return [
        Finding(
            gate=ROUND_TRIP,
            code=v.ROUND_TRIP_MISMATCH,
            event_class=ROUND_TRIP_MISMATCH,
            key=f"round_trip:{sha256_hex(ctx.stored_messages[index])}",
            detail=f"Stored message {index} {problem}.",
        )
        for index, problem in sorted(problems.items())
    ]


# ---- gate 2: authority ---------------------------------------------------------------------------------


def check_authority(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 2: history a client handed over is untrusted, however well-formed."""
    if CLIENT not in ctx.sources:
        return []
    return [
        Finding(
            gate=AUTHORITY,
            code=v.UNTRUSTED_HISTORY,
            event_class=UNTRUSTED_HISTORY,
            key="untrusted",
            detail=(
                "This run's history was supplied by a client (a client API key, or a server marking it "
                "client-supplied), not loaded from an authorized server-side source."
            ),
        )
    ]


# ---- gate 3: prompt continuity -------------------------------------------------------------------------


def _system_prompts(messages: Sequence[ModelMessage]) -> list[SystemPromptPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart)
    ]


def _instructions(messages: Sequence[ModelMessage]) -> list[str]:
    return [m.instructions for m in messages if isinstance(m, ModelRequest) and m.instructions]


def _prompt_hashes(messages: Sequence[ModelMessage]) -> set[str]:
    """Every hash a prompt contract may name: each system prompt, each request's system prompts together,
    and each recorded instructions text."""
    hashes = {prompt_sha256(part.content) for part in _system_prompts(messages)}
    for message in messages:
        if isinstance(message, ModelRequest):
            joined = [part.content for part in message.parts if isinstance(part, SystemPromptPart)]
            if joined:
                hashes.add(prompt_sha256("\n\n".join(joined)))
    hashes.update(prompt_sha256(text) for text in _instructions(messages))
    return hashes


def _prompt_gap(ctx: AuditContext, reason: str, contract_key: str) -> Finding:
    return Finding(
        gate=PROMPT_CONTINUITY,
        code=v.SYSTEM_PROMPT_GAP,
        event_class=PROMPT_GAP,
        key=f"prompt_gap:{contract_key}",
        detail=reason,
    )


def check_prompt_continuity(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 3: the history carries the agent's prompt contract (hash, label or dynamic instructions)."""
    if not messages:
        return []
    agent = f"agent '{ctx.agent_name}'" if ctx.agent_name else "this run's agent"
    prompts = _system_prompts(messages)
    instructions = _instructions(messages)
    contract = ctx.prompt_contract
    if contract is None:
        if prompts or instructions:
            return []
        return [
            _prompt_gap(
                ctx,
                f"The history carries no system prompt and no instructions, and no prompt contract is "
                f"registered for {agent}.",
                "none",
            )
        ]
    contract_key = sha256_hex(f"{contract.kind}:{contract.value}")[:16]
    if contract.kind == CONTRACT_DYNAMIC:
        # The agent regenerates dynamic instructions on every run, so the history need not carry a system
        # prompt; what it must show is that the agent really ran on instructions.
        if instructions:
            return []
        reason = (
            f"{agent.capitalize()} is declared to run on dynamic instructions, "
            "but no request in the history recorded any."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    if contract.kind == CONTRACT_HASH:
        if contract.value in _prompt_hashes(messages):
            return []
        carried = f"{len(prompts)} system prompt part(s)" if prompts else "no system prompt"
        reason = (
            f"The history carries {carried} and none matches the prompt hash registered for {agent} "
            f"({contract.value[:12]}…)."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    if contract.kind == CONTRACT_LABEL:
        texts = [part.content for part in prompts] + instructions
        if any(part.dynamic_ref == contract.value for part in prompts) or any(
            contract.value in t for t in texts
        ):
            return []
        carried = f"{len(prompts)} system prompt part(s)" if prompts else "no system prompt"
        reason = (
            f"The history carries {carried} and none carries the prompt label '{contract.value}' of {agent}."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    raise ValueError(f"Unknown prompt contract kind {contract.kind!r}")


# ---- gate 4: honest tool pairing -----------------------------------------------------------------------


def _is_tool_result(part: object) -> TypeGuard[ToolReturnPart | RetryPromptPart]:
    if isinstance(part, ToolReturnPart):
        return True
    return isinstance(part, RetryPromptPart) and part.tool_name is not None


def _is_synthesized(part: object) -> bool:
    return isinstance(part, ToolReturnPart) and bool(
        (part.metadata or {}).get(SYNTHESIZED_TOOL_RETURN_METADATA_KEY)
    )


def _ledger_says(ctx: AuditContext, tool_call_id: str) -> str:
    if ctx.tool_effects is None:
        return "No tool-effect ledger was ingested for this run, so whether it started is unknown."
    status = ctx.tool_effects.get(tool_call_id)
    if status is None:
        return "The tool-effect ledger has no record of it: it never started, so it had no side effect."
    if status == "started":
        return "The tool-effect ledger shows it started and never finished: its side effect may exist."
    if status == "completed":
        return (
            "The tool-effect ledger shows it completed, but its result is missing: "
            "its side effect probably exists."
        )
    if status == "failed":
        return "The tool-effect ledger shows it failed; a partial side effect may exist."
    return f"The tool-effect ledger status is '{status}'."


def merge_adjacent_requests(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """Adjacent requests joined into one, part objects kept, in one pass.

    pydantic-ai's repair merges adjacent messages as its last step, in time quadratic in a run of requests
    (10,000 requests took 12 s). Joining them first leaves it nothing to merge, and cannot change what it
    drops or synthesizes: pairing looks at which results follow which response, and joining requests moves
    no part across a response (tests/sessions_app/audit/test_audit_repair_is_linear.py checks agreement).
    """
    merged: list[ModelMessage] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if isinstance(message, ModelRequest) and isinstance(previous, ModelRequest):
            merged[-1] = replace(previous, parts=[*previous.parts, *message.parts])
        else:
            merged.append(message)
    return merged


def check_tool_pairing(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 4: run pydantic-ai's own `repair_messages` and report what it drops and what it synthesizes.

    A repair makes a provider accept the request; it proves neither that the tool finished nor that its side
    effect did not happen. Returns an earlier repair synthesized, already stored in the history, count too.
    """
    findings: list[Finding] = []
    repaired = repair_messages(merge_adjacent_requests(messages))
    # repair_messages keeps the part objects it does not drop, so identity tells kept from dropped.
    kept = {id(part) for message in repaired for part in message.parts}
    original = {id(part) for message in messages for part in message.parts}
    seen: set[str] = set()
    part: ModelRequestPart | ModelResponsePart  # the two loops below share the name

    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if _is_tool_result(part) and id(part) not in kept:
                call_hash = hash_tool_call_id(part.tool_call_id)
                key = f"orphan:{call_hash}"
                if key in seen:
                    continue
                seen.add(key)
                findings.append(
                    Finding(
                        gate=TOOL_PAIRING,
                        code=v.ORPHAN_RESULT_REMOVED,
                        event_class=ORPHAN_REMOVED,
                        key=key,
                        detail=(
                            f"A result of tool '{part.tool_name}' answers a call that is not in the history; "
                            "pydantic-ai drops it before the next request."
                        ),
                        tool_call_hash=call_hash,
                        tool_name=part.tool_name or "",
                    )
                )

    for message in repaired:
        for part in message.parts:
            if not _is_synthesized(part):
                continue
            assert isinstance(part, ToolReturnPart)
            call_hash = hash_tool_call_id(part.tool_call_id)
            key = f"interrupted:{call_hash}"
            if key in seen:
                continue
            seen.add(key)
            how = (
                "was closed out by an earlier repair stored in the history"
                if id(part) in original
                else "has no result; pydantic-ai synthesizes an 'interrupted' return for it"
            )
            findings.append(
                Finding(
                    gate=TOOL_PAIRING,
                    code=v.INTERRUPTED_TOOL,
                    event_class=INTERRUPTED_SYNTHESIZED,
                    key=key,
                    detail=f"A call of tool '{part.tool_name}' {how}. {_ledger_says(ctx, part.tool_call_id)}",
                    tool_call_hash=call_hash,
                    tool_name=part.tool_name,
                )
            )
    return findings


# ---- gate 5: conversation scope ------------------------------------------------------------------------


def _scope(key: str, detail: str, conversation_id: str = "") -> Finding:
    return Finding(
        gate=CONVERSATION_SCOPE,
        code=v.SCOPE_DRIFT,
        event_class=SCOPE_DRIFT,
        key=f"scope:{key}",
        detail=detail,
        conversation_id=conversation_id,
    )


def check_conversation_scope(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 5: every message belongs to the run's conversation, in this tenant, and ids are not confused."""
    findings: list[Finding] = []
    ids = Counter(m.conversation_id for m in messages if m.conversation_id)
    message_run_ids = {m.run_id for m in messages if m.run_id}
    stray = sorted(set(ids) - {ctx.conversation_id} - ctx.merged_conversation_ids)
    if stray:
        listed = ", ".join(f"'{cid}' ({ids[cid]} message(s))" for cid in stray)
        findings.append(
            _scope(
                "mixed:" + sha256_hex("\n".join(stray))[:16],
                f"The run belongs to conversation '{ctx.conversation_id}', but its history also carries "
                f"{listed}, with no recorded merge.",
            )
        )
    for cid in stray:
        if cid not in ctx.owned_conversation_ids:
            findings.append(
                _scope(
                    "foreign:" + sha256_hex(cid)[:16],
                    f"Conversation '{cid}' in this history is not a conversation of this tenant.",
                    conversation_id=cid,
                )
            )
    for cid in sorted(set(ids) | {ctx.conversation_id}):
        if cid == ctx.run_id or cid in message_run_ids or cid in ctx.tenant_run_ids:
            findings.append(
                _scope(
                    "run_id_as_conversation:" + sha256_hex(cid)[:16],
                    f"The run id '{cid}' is used as a conversation key.",
                    conversation_id=cid,
                )
            )
    if ctx.parent_run_id and ctx.parent_conversation_id == ctx.conversation_id:
        findings.append(
            _scope(
                "fork:" + sha256_hex(ctx.parent_run_id)[:16],
                f"This run branched from run '{ctx.parent_run_id}' but kept its conversation id "
                f"'{ctx.conversation_id}'; a fork needs its own.",
                conversation_id=ctx.conversation_id,
            )
        )
    findings.extend(_principal_drift(ctx))
    return findings


def short_principal(principal_hash: str) -> str:
    """How a principal is shown: the first 12 hex digits of its keyed hash, or 'none'."""
    return f"{principal_hash[:12]}…" if principal_hash else "none"


def _principal_drift(ctx: AuditContext) -> list[Finding]:
    """The conversation belongs to its first principal: a run written for another one, or a replay asked for
    another one (or for none), is history moving from one authorization to another."""
    owner = ctx.owner_principal_hash
    if not owner:
        return []
    findings = [
        _scope(
            "principal:" + other[:16],
            f"This run was written for principal {short_principal(other)}, but conversation "
            f"'{ctx.conversation_id}' belongs to principal {short_principal(owner)}.",
            conversation_id=ctx.conversation_id,
        )
        for other in sorted(ctx.run_principal_hashes - {owner, ""})
    ]
    requested = ctx.replay_principal_hash
    if requested is not None and requested != owner:
        asked = f"principal {short_principal(requested)}" if requested else "no principal"
        findings.append(
            _scope(
                "replay_principal:" + (requested[:16] or "none"),
                f"Replay was asked for {asked}, but conversation '{ctx.conversation_id}' belongs to "
                f"principal {short_principal(owner)}.",
                conversation_id=ctx.conversation_id,
            )
        )
    return findings


# ---- gate 6: outcome receipt ---------------------------------------------------------------------------


def _unproven_effects(ctx: AuditContext) -> str | None:
    """What the receipts fail to prove, or None when every effect they name has outcome evidence."""
    best: dict[str, int] = {}
    for receipt in ctx.receipts:
        level = EVIDENCE_LEVELS.index(receipt.evidence)
        best[receipt.effect] = max(best.get(receipt.effect, -1), level)
    outcome = EVIDENCE_LEVELS.index(OUTCOME)
    unproven = sorted(effect for effect, level in best.items() if level < outcome)
    if best and not unproven:
        return None
    if unproven:
        return "; ".join(f"'{e}' has only {EVIDENCE_LEVELS[best[e]]} evidence" for e in unproven)
    return "There is no receipt for this run"


def check_outcome_receipt(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 6: an outcome receipt for every effect the run claims; a live wait first; else stuck or missing.

    An unresolved wait whose deadline is ahead makes the run WAITING whether or not its history holds a model
    response (or receipts): a person's decision is pending, and resuming now would go past that person. Past
    its deadline the run is STUCK, unless outcome receipts prove every effect.
    """
    responded = any(isinstance(m, ModelResponse) for m in messages)
    open_waits = [w for w in ctx.waits if not w.resolved]
    live = [w for w in open_waits if w.deadline > ctx.now]
    gap = _unproven_effects(ctx)
    if not responded and gap is not None:
        what = "The history holds no model response yet"
    else:
        what = gap or "Every effect has an outcome receipt"
    if live:
        wait = min(live, key=lambda w: w.deadline)
        return [
            Finding(
                gate=OUTCOME_RECEIPT,
                code=v.WAITING,
                event_class=WAITING,
                key=f"waiting:{wait.deadline.isoformat()}",
                detail=(
                    f"{what}, but the run is waiting for {wait.owner} to decide: {wait.decision} "
                    f"(deadline {wait.deadline.isoformat()})."
                ),
            )
        ]
    if gap is None or (not responded and not open_waits):
        return []  # proven, or nothing was produced yet and nobody is waiting: no effect to prove
    if open_waits:
        wait = max(open_waits, key=lambda w: w.deadline)
        return [
            Finding(
                gate=OUTCOME_RECEIPT,
                code=v.STUCK,
                event_class=STUCK,
                key=f"stuck:{wait.deadline.isoformat()}",
                detail=(
                    f"{what}, and the wait for {wait.owner} ({wait.decision}) passed its deadline "
                    f"{wait.deadline.isoformat()} with no outcome."
                ),
            )
        ]
    return [
        Finding(
            gate=OUTCOME_RECEIPT,
            code=v.MISSING_OUTCOME_RECEIPT,
            event_class=MISSING_RECEIPT,
            key="missing_receipt",
            detail=f"{gap}: nothing proves the intended effect exists.",
        )
    ]


# ---- all gates -----------------------------------------------------------------------------------------

Gate = Callable[[Sequence[ModelMessage], AuditContext], list[Finding]]

GATE_FUNCTIONS: tuple[Gate, ...] = (
    check_round_trip,
    check_authority,
    check_prompt_continuity,
    check_tool_pairing,
    check_conversation_scope,
    check_outcome_receipt,
)


@dataclass(frozen=True)
class GateReport:
    verdict: str
    findings: tuple[Finding, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "findings": [f.as_dict() for f in self.findings]}


def run_gates(ctx: AuditContext, messages: Sequence[ModelMessage] | None = None) -> GateReport:
    """Run all six gates over the stored history in `ctx`; keep every finding, graver ones first.

    `messages` may pass in `load_history(ctx.stored_messages)` when the caller already loaded it.
    """
    if messages is None:
        messages = load_history(ctx.stored_messages)
    findings = [finding for gate in GATE_FUNCTIONS for finding in gate(messages, ctx)]
    findings.sort(key=lambda f: v.verdict_rank(f.code))
    return GateReport(verdict=v.decide_verdict(f.code for f in findings), findings=tuple(findings))
