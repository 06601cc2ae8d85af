"""pydantic-ai's spans of an OTLP trace export back to its agent runs and their messages. Pure (no Django).

The export arrives as plain spans (`ingest.otlp_wire`). Of them, pydantic-ai's agent-run spans
(`gen_ai.operation.name = invoke_agent`) carry the run's whole history in `pydantic_ai.all_messages` (the
OpenTelemetry GenAI message shape, instrumentation formats 2 to 6) and where this run's own messages begin
(`pydantic_ai.new_message_index`); its model-request spans (`chat`) carry the model, the token usage and the timing
of each response, its tool spans (`execute_tool`) when each tool call ran. A run becomes one API-shaped snapshot
(`snapshot_of_run`), validated by `ingest.payloads` like any other.

The GenAI shape leaves out what pydantic-ai stamps on a message (times, usage, model, run and conversation ids),
so this run's own messages get them back from its spans: a response from the model-request span that produced it,
a request from the model-request span that sent it. Messages inherited from earlier runs are taken from copies
already known (the conversation's stored transcript, earlier runs of the same export) when their content is the
same, so a threaded run repeats its history byte for byte and recovery sees the same messages again.

Every span is either used, kept, or counted as rejected with the reason (OTLP partial success): spans not from
pydantic-ai and runs without message content (instrumentation with `include_content=False`) are rejected.
pydantic-ai spans whose run span is not in the export are kept (`DecodedExport.orphans`): SimpleSpanProcessor
exports each span as it ends, so a run's model-request and tool spans arrive before its run span, and
`ingest.traces` stores them as pending spans and hands them back (`earlier`) when the run span arrives, so the
run comes out as if its spans had come in one export.
"""

import base64
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field, replace
from datetime import datetime

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_core import PydanticSerializationError, to_json

from input_errors import RejectedInput
from sessions_app.core.api_input import decode_json
from sessions_app.core.sized_lru import SizedLRU
from sessions_app.ingest.otlp_wire import Json, SpanFacts, spans_of
from sessions_app.ingest.payloads import (
    IngestError,
    RuntimeSpanPayload,
    SnapshotPayload,
    ToolEffectPayload,
    parse_tool_effect,
    snapshot_of_messages,
)

PYDANTIC_AI_SCOPE = "pydantic-ai"
RUN_OPERATION = "invoke_agent"
MODEL_OPERATION = "chat"
TOOL_OPERATION = "execute_tool"
# The harness's runtime spans kept (by span name, as the harness names them: compaction/_shared.py,
# approval_reviewer/_capability.py, tool_call_judge/_capability.py): their kind and the attributes kept, by
# prefix. Only these attributes: tool arguments (`*.arguments`) and anything else the span carries stay out.
RUNTIME_SPANS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "compact_messages": (
        "compaction",
        "compaction.",
        ("strategy", "messages_before", "messages_after", "tokens_before", "tokens_after", "model_requested",
         "background"),
    ),
    "review tool approval": (
        "approval_review",
        "approval_reviewer.",
        ("tool", "tool_call_id", "decision", "confidence", "model_result", "error.type"),
    ),
    "judge tool call": (
        "judge",
        "tool_call_judge.",
        ("tool", "tool_call_id", "verdict", "confidence", "model_result", "error.type"),
    ),
}  # fmt: skip
MAX_FACT_CHARS = 200
USAGE_ATTRIBUTES = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cache_read_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
}
# What a run reads of a span kept for it (`span_json`): which run it belongs to, a model request's model (and its
# provider: `_model_id`), usage and instructions, a tool call's id and name, a runtime span's facts. Never the
# messages, arguments or results a model-request or tool span also carries: they are the run span's to give, and
# kept here they would be stored unmasked until the run span comes (and, at a long history, be most of what is
# written and read back).
PENDING_ATTRIBUTES = frozenset(
    {"gen_ai.operation.name", "gen_ai.agent.call.id", "gen_ai.conversation.id"}
    | {"gen_ai.response.model", "gen_ai.request.model", "gen_ai.provider.name", "gen_ai.system"}
    | {"gen_ai.system_instructions", *USAGE_ATTRIBUTES.values()}
    | {"gen_ai.tool.call.id", "gen_ai.tool.name"}
    | {prefix + name for _, prefix, names in RUNTIME_SPANS.values() for name in names}
)


@dataclass(frozen=True)
class TracedRun:
    """A pydantic-ai agent run read from its spans: its whole history as `ModelMessagesTypeAdapter` JSON (this
    run's own messages stamped from its model-request spans) and its tool calls' start and end."""

    span: SpanFacts
    conversation_id: str
    run_id: str
    agent: str
    parent_run_id: str
    new_message_index: int
    messages: list[dict[str, Json]]
    # The JSON (as `to_json` writes it) of each message the run inherited, as read from its span: `messages`
    # holds the very data read for those, so their JSON is the read's, made once per message of a conversation.
    inherited_texts: Sequence[str]
    tool_effects: list[ToolEffectPayload] = field(default_factory=list)
    refused_tools: list[str] = field(default_factory=list)  # why each tool span not recorded was not
    runtime_spans: list[RuntimeSpanPayload] = field(default_factory=list)  # compactions, reviews, judgements
    span_count: int = 1  # the run span and the spans of it used, refused with it if the run is

    @property
    def idempotency_key(self) -> str:
        return f"otlp:{self.span.trace_id}:{self.span.span_id}"


@dataclass
class DecodedExport:
    runs: list[TracedRun] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)  # reason -> spans
    orphans: list[SpanFacts] = field(default_factory=list)  # this export's pydantic-ai spans without their run
    attached: set[tuple[str, str]] = field(default_factory=set)  # the earlier spans a run of this export used

    def reject(self, reason: str, count: int = 1) -> None:
        self.rejected[reason] += count

    @property
    def rejected_spans(self) -> int:
        return sum(self.rejected.values())

    def message(self) -> str:
        return "; ".join(f"{count} span(s) {reason}" for reason, count in self.rejected.items())


def decode_export(request: ExportTraceServiceRequest, earlier: Sequence[SpanFacts] = ()) -> DecodedExport:
    """The pydantic-ai runs an export carries, the spans it does not use with the reason, and its pydantic-ai spans
    whose run span is not in it (kept for a later export). `earlier` are spans kept from earlier exports of the
    same traces: a run of this export uses them as if they were in it, in any order of arrival."""
    return decode_spans(spans_of(request), earlier)


def decode_spans(spans: Sequence[SpanFacts], earlier: Sequence[SpanFacts] = ()) -> DecodedExport:
    decoded = DecodedExport()
    sent = {(span.trace_id, span.span_id) for span in spans}
    spans = [*spans, *(span for span in earlier if (span.trace_id, span.span_id) not in sent)]
    ours = []
    for span in spans:
        # By scope, not by GenAI operation names: a provider SDK's own instrumentation (OpenAI's, say) emits
        # `chat` spans too, inside pydantic-ai's, and would be paired with the wrong responses.
        if span.scope == PYDANTIC_AI_SCOPE:
            ours.append(span)
        else:
            decoded.reject(f"not from pydantic-ai's instrumentation (scope '{span.scope[:60]}')")
    by_id = {(span.trace_id, span.span_id): span for span in ours}
    runs = {key: span for key, span in by_id.items() if span.operation == RUN_OPERATION}
    children: dict[tuple[str, str], list[SpanFacts]] = {key: [] for key in runs}
    by_call: dict[tuple[str, str], tuple[str, str]] = {}
    for key, run_span in runs.items():
        call_id = run_span.attributes.get("gen_ai.agent.call.id")
        if call_id:
            by_call.setdefault((run_span.trace_id, str(call_id)), key)  # the first, as the scan over runs found
    for span in ours:
        if span.operation == RUN_OPERATION:
            continue
        key = (span.trace_id, span.span_id)
        run_key = _run_of(span, by_id, runs, by_call)
        if run_key is None:
            if key in sent:  # an earlier span still without its run stays kept as it is
                decoded.orphans.append(span)
            continue
        if key not in sent:
            decoded.attached.add(key)
        if span.operation in (MODEL_OPERATION, TOOL_OPERATION) or span.name in RUNTIME_SPANS:
            children[run_key].append(span)
        # Other pydantic-ai spans inside a run (a tools group, an output validation) carry nothing stored: they
        # belong to a run that is stored, so they are not refused.
    for key, span in sorted(runs.items(), key=lambda item: item[1].started_at):
        parent = _run_of(span, by_id, runs)  # a run inside another's tool call: a sub-agent
        parent_run_id = str(runs[parent].attributes.get("gen_ai.agent.call.id") or parent[1]) if parent else ""
        problem, run = _traced_run(span, children[key], parent_run_id)
        if run is None:
            decoded.reject(problem, 1 + len(children[key]))
        else:
            decoded.runs.append(run)
            for reason in run.refused_tools:
                decoded.reject(reason)
    return decoded


def span_json(span: SpanFacts) -> dict[str, Json]:
    """A span as JSON, to keep it until its run span arrives (`span_of` reads it back): only the attributes a run
    reads of it (`PENDING_ATTRIBUTES`)."""
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "scope": span.scope,
        "started_at": span.started_at.isoformat(),
        "ended_at": span.ended_at.isoformat(),
        "failed": span.failed,
        "attributes": {name: value for name, value in span.attributes.items() if name in PENDING_ATTRIBUTES},
    }


def span_of(data: Mapping[str, Json]) -> SpanFacts:
    attributes = data["attributes"]
    return SpanFacts(
        trace_id=str(data["trace_id"]),
        span_id=str(data["span_id"]),
        parent_span_id=str(data["parent_span_id"]),
        name=str(data["name"]),
        scope=str(data["scope"]),
        started_at=datetime.fromisoformat(str(data["started_at"])),
        ended_at=datetime.fromisoformat(str(data["ended_at"])),
        failed=bool(data["failed"]),
        attributes=attributes if isinstance(attributes, dict) else {},
    )


def _run_of(
    span: SpanFacts,
    by_id: Mapping[tuple[str, str], SpanFacts],
    runs: Mapping[tuple[str, str], SpanFacts],
    by_call: Mapping[tuple[str, str], tuple[str, str]] | None = None,
) -> tuple[str, str] | None:
    """The nearest agent-run span above `span` in this export (a nested agent's run owns its own requests), else
    the run span of the run id the span names (looked up in `by_call`, when given): constant work per span, so
    an export's spans are matched in linear time."""
    seen = 0
    key = (span.trace_id, span.parent_span_id)
    while key[1] and seen < 64:
        if key in runs:
            return key
        parent = by_id.get(key)
        if parent is None:
            break
        key, seen = (parent.trace_id, parent.parent_span_id), seen + 1
    call_id = span.attributes.get("gen_ai.agent.call.id")
    if call_id and by_call is not None:
        return by_call.get((span.trace_id, str(call_id)))
    return None


NO_CONTENT = (
    "of agent runs without message content (instrumentation with include_content=False): "
    "Sessiondesk stores transcripts, so turn content capture on for runs you send here"
)


def _read_history(text: str) -> tuple[str, list[dict[str, Json]] | None]:
    """A run span's `pydantic_ai.all_messages` as `ModelMessagesTypeAdapter` JSON, or why it cannot be."""
    try:
        chat = decode_json(text.encode())
    except RejectedInput as error:
        return f"of agent runs whose 'pydantic_ai.all_messages' is not JSON ({error.message})", None
    if not isinstance(chat, list) or not all(isinstance(m, dict) for m in chat):
        return "of agent runs whose 'pydantic_ai.all_messages' is not a list of messages", None
    if not _has_content(chat):
        return NO_CONTENT, None
    try:
        return "", _messages(chat)
    except ValueError as error:
        return f"of agent runs whose messages cannot be read ({error})", None


@dataclass(frozen=True)
class _Read:
    text: str  # a run span's `pydantic_ai.all_messages`
    messages: list[dict[str, Json]]  # `_read_history` of it; never changed (runs stamp copies)
    texts: list[str]  # each message's `to_json`


def _texts(messages: Sequence[dict[str, Json]]) -> list[str]:
    return [_text(message) for message in messages]


def _text(message: dict[str, Json]) -> str:
    """A plain message's `to_json`, or "" when it has none (a binary part's bytes that are not UTF-8): a text that
    is no message's `trace_key`."""
    try:
        return to_json(message).decode()
    except PydanticSerializationError:
        return ""


class ReadHistories:
    """The history last read from each conversation's run span, so a threaded run reads only what is new.

    pydantic-ai writes a history the same way at every run, so a run threaded through `message_history` carries the
    text of the run before it, then its own messages: when a run's text begins with the kept text (compared byte
    for byte, less its closing bracket), only the rest is decoded and read, and the kept messages come first. What
    is kept is a function of the text alone, so two tenants' conversations of one id read as they would afresh.
    A bounded LRU per process, by the characters of text held (the decoded messages take about three times as much
    memory again); pure (no Django)."""

    def __init__(self, limit: int = 16_000_000) -> None:
        self._kept: SizedLRU[str, _Read] = SizedLRU(limit, lambda read: len(read.text))

    def read(self, conversation: str, text: str) -> tuple[str, list[dict[str, Json]] | None, list[str]]:
        """`_read_history(text)`, reading only what follows the text kept for `conversation` when it begins so;
        and each message's JSON as `to_json` writes it (to be compared, not changed)."""
        kept = self._kept.get(conversation)
        read = self._after(kept, text) if kept is not None else None
        problem = ""
        if read is None:
            problem, messages = _read_history(text)
            read = _Read(text, messages, _texts(messages)) if messages is not None else None
        if read is None:
            return problem, None, []
        self._kept.put(conversation, read)
        return problem, list(read.messages), read.texts

    @staticmethod
    def _after(kept: _Read, text: str) -> _Read | None:
        """`text` read, if it is `kept.text` with messages added and they read; None to read it whole (which also
        names any problem as a whole read does)."""
        head = len(kept.text) - 1  # the kept text less its closing bracket
        if not (kept.messages and len(text) > head + 1 and text[head] == "," and text.startswith(kept.text[:head])):
            return None
        _, added = _read_history("[" + text[head + 1 :])
        if not added or (added[0]["kind"] == "request" and kept.messages[-1]["kind"] == "request"):
            return None  # unreadable, or two requests that read whole are one (pydantic-ai splits one by role)
        return _Read(text, kept.messages + added, kept.texts + _texts(added))

    def clear(self) -> None:
        self._kept.clear()


READ_HISTORIES = ReadHistories()


def _traced_run(
    span: SpanFacts, children: Sequence[SpanFacts], parent_run_id: str = ""
) -> tuple[str, TracedRun | None]:
    raw = span.attributes.get("pydantic_ai.all_messages")
    if not isinstance(raw, str):
        return "of agent runs without 'pydantic_ai.all_messages' (instrumentation format 2 or later needed)", None
    conversation = str(span.attributes.get("gen_ai.conversation.id") or "")
    problem, read, texts = READ_HISTORIES.read(conversation or span.trace_id, raw)
    if read is None:
        return problem, None
    index = span.attributes.get("pydantic_ai.new_message_index")
    new_index = index if isinstance(index, int) and 0 <= index <= len(read) else 0
    # The messages read are kept for the next run of the conversation as read: this run's own get stamped copies.
    messages = read[:new_index] + deepcopy(read[new_index:])
    run_id = str(span.attributes.get("gen_ai.agent.call.id") or span.span_id)
    # A model request that failed left no response in the history (the retry that followed did).
    models = sorted(
        (c for c in children if c.operation == MODEL_OPERATION and not c.failed), key=lambda c: c.started_at
    )
    _stamp(messages, new_index, models, span, run_id, conversation)
    effects, refused = _tool_effects(run_id, [c for c in children if c.operation == TOOL_OPERATION])
    agent = str(span.attributes.get("gen_ai.agent.name") or span.attributes.get("agent_name") or "")
    runtime = [runtime_span(run_id, c) for c in children if c.name in RUNTIME_SPANS] + pending_approvals(run_id, span)
    return "", TracedRun(
        span=span,
        conversation_id=conversation or span.trace_id,
        run_id=run_id,
        agent=agent,
        parent_run_id=parent_run_id,
        new_message_index=new_index,
        messages=messages,
        inherited_texts=texts[:new_index],
        tool_effects=effects,
        refused_tools=refused,
        span_count=1 + len(children) - len(refused),
        runtime_spans=runtime,
    )


def pending_approvals(run_id: str, span: SpanFacts) -> list[RuntimeSpanPayload]:
    """The calls a run ended waiting on: pydantic-ai puts the run's output on its span as `final_result`, and a
    run that ended on `DeferredToolRequests` has there `{"calls": [...], "approvals": [...]}`, each a tool call
    (the harness's StepPersistence saves no snapshot of such a run: its history ends on an unanswered call).
    Only the calls' tool names and ids are kept, never their arguments."""
    raw = span.attributes.get("final_result")
    if not isinstance(raw, str) or '"approvals"' not in raw:
        return []
    try:
        output = decode_json(raw.encode())
    except RejectedInput:
        return []
    if not isinstance(output, dict) or not isinstance(output.get("approvals"), list):
        return []
    pending = []
    for kind, calls in (("approval", output.get("approvals")), ("external", output.get("calls"))):
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and isinstance(call.get("tool_call_id"), str) and call["tool_call_id"]:
                call_id = call["tool_call_id"][:MAX_FACT_CHARS]
                pending.append(
                    RuntimeSpanPayload(
                        run_id=run_id,
                        span_key=f"otlp:{span.trace_id}:{span.span_id}:{call_id}",
                        kind="approval_pending",
                        started_at=span.ended_at,  # waiting since the run ended
                        ended_at=span.ended_at,
                        facts={"tool": str(call.get("tool_name") or "")[:MAX_FACT_CHARS], "tool_call_id": call_id}
                        | {"wait": kind},
                    )
                )
    return pending


def runtime_span(run_id: str, span: SpanFacts) -> RuntimeSpanPayload:
    """A compaction, approval-review or judgement span with only its named attributes (scalars, strings cut to
    MAX_FACT_CHARS), keyed by its trace and span ids so a re-sent export adds nothing."""
    kind, prefix, names = RUNTIME_SPANS[span.name]
    facts: dict[str, str | int | float | bool] = {}
    for name in names:
        value = span.attributes.get(prefix + name)
        if isinstance(value, str):
            facts[name] = value[:MAX_FACT_CHARS]
        elif isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
            facts[name] = value  # NaN and infinities are not JSON (PostgreSQL's jsonb refuses them)
    return RuntimeSpanPayload(
        run_id=run_id,
        span_key=f"otlp:{span.trace_id}:{span.span_id}",
        kind=kind,
        started_at=span.started_at,
        ended_at=span.ended_at,
        facts=facts,
    )


def _tool_effects(run_id: str, tools: Sequence[SpanFacts]) -> tuple[list[ToolEffectPayload], list[str]]:
    """The tool spans as tool-effect records (validated as POST /api/v1/tool-effects is), and why any is not."""
    effects, refused = [], []
    for tool in tools:
        try:
            effect = parse_tool_effect(
                {
                    "run_id": run_id,
                    "tool_call_id": tool.attributes.get("gen_ai.tool.call.id"),
                    "tool_name": tool.attributes.get("gen_ai.tool.name") or tool.name,
                    "status": "failed" if tool.failed else "completed",
                }
            )
        except IngestError as error:
            refused.append(f"of tools refused as tool-effect records ({error.message})")
            continue
        effects.append(replace(effect, started_at=tool.started_at, ended_at=tool.ended_at))
    return effects, refused


_CONTENT_FIELDS = {"text": "content", "thinking": "content", "uri": "uri", "image-url": "url", "blob": "content"}


def _has_content(chat: Sequence[Mapping[str, Json]]) -> bool:
    """False when instrumentation left content out: a text part always has it when content capture is on."""
    for message in chat:
        for part in _parts(message):
            wanted = _CONTENT_FIELDS.get(str(part.get("type")))
            if wanted and wanted not in part:
                return False
    return True


def _parts(message: Mapping[str, Json]) -> list[Mapping[str, Json]]:
    parts = message.get("parts")
    return [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []


_URL_KINDS = {"image": "image-url", "audio": "audio-url", "video": "video-url"}


def _user_content(part: Mapping[str, Json]) -> Json:
    kind = part.get("type")
    if kind == "text":
        return str(part.get("content", ""))
    if kind == "uri" or (isinstance(kind, str) and kind.endswith("-url")):
        url = part.get("uri") or part.get("url")
        url_kind = kind if kind != "uri" else _URL_KINDS.get(str(part.get("modality")), "document-url")
        content: dict[str, Json] = {"url": url, "kind": url_kind}
        if part.get("mime_type"):
            content["media_type"] = part["mime_type"]
        return content
    if kind in ("blob", "binary"):
        media_type = part.get("mime_type") or part.get("media_type") or "application/octet-stream"
        try:
            data = base64.b64decode(str(part.get("content", "")), validate=True)
        except ValueError:
            raise ValueError("a binary part whose content is not base64") from None
        return {"data": data, "media_type": media_type, "kind": "binary"}
    raise ValueError(f"unsupported part type {str(kind)[:40]!r} in a request")


def _request_parts(role: str, parts: Sequence[Mapping[str, Json]]) -> list[dict[str, Json]]:
    out: list[dict[str, Json]] = []
    prompt: list[Json] = []

    def flush() -> None:
        if prompt:
            content = prompt[0] if len(prompt) == 1 and isinstance(prompt[0], str) else list(prompt)
            out.append({"part_kind": "user-prompt", "content": content})
            prompt.clear()

    for part in parts:
        kind = part.get("type")
        if kind == "tool_call_response":
            flush()
            out.append(
                {
                    "part_kind": "tool-return",
                    "tool_name": str(part.get("name", "")),
                    "tool_call_id": str(part.get("id", "")),
                    "content": part.get("result"),
                }
            )
        elif role == "system" and kind == "text":
            flush()
            out.append({"part_kind": "system-prompt", "content": str(part.get("content", ""))})
        else:
            prompt.append(_user_content(part))
    flush()
    return out


def _response_parts(parts: Sequence[Mapping[str, Json]]) -> list[dict[str, Json]]:
    out: list[dict[str, Json]] = []
    for part in parts:
        kind = part.get("type")
        if kind in ("text", "thinking"):
            out.append({"part_kind": kind, "content": str(part.get("content", ""))})
        elif kind == "tool_call":
            out.append(
                {
                    "part_kind": "builtin-tool-call" if part.get("builtin") else "tool-call",
                    "tool_name": str(part.get("name", "")),
                    "tool_call_id": str(part.get("id", "")),
                    "args": part.get("arguments"),
                }
            )
        elif kind == "tool_call_response" and part.get("builtin"):
            out.append(
                {
                    "part_kind": "builtin-tool-return",
                    "tool_name": str(part.get("name", "")),
                    "tool_call_id": str(part.get("id", "")),
                    "content": part.get("result"),
                }
            )
        else:
            raise ValueError(f"unsupported part type {str(kind)[:40]!r} in a response")
    return out


def _messages(chat: Sequence[Mapping[str, Json]]) -> list[dict[str, Json]]:
    """GenAI chat messages back to `ModelMessagesTypeAdapter` JSON: pydantic-ai splits a request into one chat
    message per role, so the messages between two responses are one request again."""
    messages: list[dict[str, Json]] = []
    for message in chat:
        parts = _parts(message)
        if message.get("role") == "assistant":
            response: dict[str, Json] = {"kind": "response", "parts": _response_parts(parts)}
            if message.get("finish_reason"):
                response["finish_reason"] = message["finish_reason"]
            messages.append(response)
            continue
        request_parts = _request_parts(str(message.get("role")), parts)
        if messages and messages[-1]["kind"] == "request":
            messages[-1]["parts"].extend(request_parts)
        else:
            messages.append({"kind": "request", "parts": request_parts})
    return messages


def _usage(attributes: Mapping[str, Json]) -> dict[str, int]:
    counts = {key: attributes.get(name) for key, name in USAGE_ATTRIBUTES.items()}
    return {key: int(count) for key, count in counts.items() if isinstance(count, int)}


def _stamp(
    messages: list[dict[str, Json]],
    new_index: int,
    models: Sequence[SpanFacts],
    run: SpanFacts,
    run_id: str,
    conversation: str,
) -> None:
    """Give this run's own messages what pydantic-ai stamps on them, from the spans: the k-th response came from
    the k-th model request (its model, usage and end), and a request was sent when the next model request began."""
    responses = [i for i in range(new_index, len(messages)) if messages[i]["kind"] == "response"]
    by_response = dict(zip(responses, models, strict=False))
    fallback_model = str(run.attributes.get("model_name") or "")
    for i in range(new_index, len(messages)):
        message = messages[i]
        message["run_id"] = run_id
        if conversation:
            message["conversation_id"] = conversation
        if message["kind"] == "response":
            model = by_response.get(i)
            if model is None:
                message["timestamp"] = run.ended_at.isoformat()
                if fallback_model:
                    message["model_name"] = fallback_model
                continue
            attributes = model.attributes
            name = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
            if name:
                message["model_name"] = str(name)
            if served_by := _model_id(attributes):
                message["model_id"] = served_by
            message["usage"] = _usage(attributes)
            message["timestamp"] = model.ended_at.isoformat()
        else:
            following = by_response.get(i + 1)
            sent = (following.started_at if following is not None else run.ended_at).isoformat()
            message["timestamp"] = sent
            instructions = _instructions(following if following is not None else run)
            if instructions:
                message["instructions"] = instructions
            for part in message["parts"]:
                if part["part_kind"] in ("user-prompt", "system-prompt", "tool-return"):
                    part["timestamp"] = sent


def _model_id(attributes: Mapping[str, Json]) -> str:
    """The model a response came from as pydantic-ai records it (`ModelResponse.model_id`): the span does not carry
    it, but it is the model's `'provider:model_name'` unless a capability aliased it, and the span has both halves."""
    provider = attributes.get("gen_ai.provider.name") or attributes.get("gen_ai.system")
    requested = attributes.get("gen_ai.request.model")
    known = isinstance(provider, str) and isinstance(requested, str) and provider and requested
    return f"{provider}:{requested}" if known else ""


def _instructions(span: SpanFacts) -> str:
    """The instructions a request was sent with: `gen_ai.system_instructions`, text parts (one, as pydantic-ai
    joins them before recording)."""
    raw = span.attributes.get("gen_ai.system_instructions")
    try:
        parts = decode_json(raw.encode()) if isinstance(raw, str) else None
    except RejectedInput:
        return ""
    if not isinstance(parts, list):
        return ""
    texts = [str(p.get("content")) for p in parts if isinstance(p, dict) and p.get("type") == "text" and "content" in p]
    return "\n\n".join(texts)


# --- inherited messages ------------------------------------------------------------------------------------

_PROJECTION = InstrumentationSettings(version=5, include_content=True)


def content_key(message: ModelMessage) -> str:
    """A message as a trace shows it (pydantic-ai's own GenAI projection): two copies with the same key hold the
    same content, whatever times, usage or ids one of them lacks."""
    return to_json(_PROJECTION.messages_to_otel_messages([message])).decode()


def trace_key(message: ModelMessage) -> str:
    """A message as `decode_export` reads it back from a run span (before stamping), as JSON: an inherited message
    of a trace with this key is this message's content, recognised before any validation."""
    chat = to_json(_PROJECTION.messages_to_otel_messages([message]))
    try:
        data = decode_json(chat)
        read = _messages(data) if isinstance(data, list) else []
    except (RejectedInput, ValueError):
        return ""
    return _text(read[0]) if len(read) == 1 else ""


class KnownMessages:
    """Copies of messages already known for one conversation, in record order, looked up by content: by the
    message as a trace carries it (`trace_key`, on the plain data) or by `content_key` (on a validated message)."""

    def __init__(self, messages: Iterable[ModelMessage] = ()) -> None:
        self.messages: list[ModelMessage] = []
        self._where: dict[str, list[int]] = {}
        self._traced: dict[str, list[int]] = {}
        self._trace_keys: list[str] = []  # each message's `trace_key`, in record order ("" for none)
        # The lookups' lists this object may append to; the others it shares with a copy (copy on write).
        self._own_where: set[str] = set()
        self._own_traced: set[str] = set()
        self.extend(messages)

    def copy(self) -> "KnownMessages":
        """A copy to extend, sharing the lookups' lists until one side extends one (copying a 1,000-message
        conversation's lists for every export was a tenth of a threaded run's time)."""
        other = KnownMessages()
        other.messages = list(self.messages)
        other._where = dict(self._where)
        other._traced = dict(self._traced)
        other._trace_keys = list(self._trace_keys)
        self._own_where, self._own_traced = set(), set()
        return other

    def extend(self, messages: Iterable[ModelMessage]) -> None:
        for message in messages:
            at = len(self.messages)
            _add(self._where, self._own_where, content_key(message), at)
            key = trace_key(message)
            if key:
                _add(self._traced, self._own_traced, key, at)
            self._trace_keys.append(key)
            self.messages.append(message)

    def inherit_traced(self, texts: Sequence[str]) -> tuple[list[ModelMessage], int]:
        """Known copies of the longest run of a traced run's first inherited messages, found by their texts (each
        one's `to_json` as read: `TracedRun.inherited_texts`) among the known `trace_key`s with no validation, and
        where in the known messages the next copy must come after."""
        known = len(self.messages)
        out: list[ModelMessage] = []
        after = 0
        # A threaded run inherits every known message in order: one comparison of the lists instead of a lookup
        # per message, which was most of the cost of a 1,000-message history.
        if 0 < known <= len(texts) and all(self._trace_keys) and list(texts[:known]) == self._trace_keys:
            out, after = list(self.messages), known
        for text in texts[len(out) :]:
            places = self._traced.get(text, [])
            at = bisect_left(places, after)
            if at == len(places):
                break
            out.append(self.messages[places[at]])
            after = places[at] + 1
        return out, after

    def inherit(
        self, messages: Sequence[ModelMessage], count: int, start: int = 0, after: int = 0
    ) -> list[ModelMessage]:
        """`messages` with each of the first `count` (those the run inherited) from `start` on replaced by the
        first known copy with the same content after the previous one replaced, so copies are taken in order."""
        out = list(messages)
        for i in range(start, min(count, len(out))):
            places = self._where.get(content_key(out[i]), [])
            at = bisect_left(places, after)
            if at < len(places):
                out[i] = self.messages[places[at]]
                after = places[at] + 1
        return out


def _add(places: dict[str, list[int]], own: set[str], key: str, at: int) -> None:
    """Add `at` to `key`'s list, which is copied first unless this object made it."""
    if key in own:
        places[key].append(at)
    else:
        places[key] = [*places.get(key, ()), at]
        own.add(key)


def validate(run: TracedRun, start: int = 0) -> list[ModelMessage]:
    """The run's messages from `start` on as pydantic-ai messages, or ValueError naming the first problem."""
    try:
        return ModelMessagesTypeAdapter.validate_python(run.messages[start:])
    except ValidationError as error:
        first = error.errors()[0]
        loc = first["loc"]
        if loc and isinstance(loc[0], int):
            loc = (loc[0] + start, *loc[1:])
        where = ".".join(str(p) for p in loc)
        raise ValueError(f"message {where}: {first['msg']}") from None


def snapshot_of_run(run: TracedRun, messages: Sequence[ModelMessage]) -> SnapshotPayload:
    """The run as a snapshot with `messages` (its history, validated), checked as any POST's is
    (`payloads.snapshot_of_messages`); IngestError naming the problem."""
    fields: dict[str, Json] = {
        "conversation_id": run.conversation_id,
        "run_id": run.run_id,
        "agent": run.agent,
        "parent_run_id": run.parent_run_id,
        "state": "interrupted" if run.span.failed else "complete",
        "idempotency_key": run.idempotency_key,
        "started_at": run.span.started_at.isoformat(),
    }
    return snapshot_of_messages(fields, messages)
