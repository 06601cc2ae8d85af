"""Read in context: the messages around a hit, masked, within the response size."""

from dataclasses import dataclass
from datetime import datetime

from masking import redact
from search_app.errors import NotFound, SearchError
from search_app.hits import rules_by_tenant
from search_app.results import MAX_RESPONSE_BYTES, JsonDict, encoded_size, record_dict
from search_app.scope import no_history_for_conversation, no_history_for_run
from sessions_app.models import ApiKey, Conversation, Run, Tenant, TranscriptEntry
from sessions_app.tenancy.scoping import conversations_readable_by, scoped

MAX_CONTEXT_SIDE = 25
MAX_CONTEXT_MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class ContextMessage:
    position: int
    run_id: str
    role: str
    timestamp: datetime | None
    text: str
    cut: bool

    def as_dict(self) -> JsonDict:
        return record_dict(self)


@dataclass
class ContextWindow:
    conversation_id: str
    around: int
    messages: list[ContextMessage]
    truncated: bool = False

    def as_dict(self) -> JsonDict:
        return {
            "conversation_id": self.conversation_id,
            "around": self.around,
            "messages": [m.as_dict() for m in self.messages],
            "truncated": self.truncated,
        }


def _side(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CONTEXT_SIDE:
        raise SearchError(f"'{name}' must be a whole number from 0 to {MAX_CONTEXT_SIDE}, got {value!r}.")
    return value


def _conversation(
    tenant: Tenant, conversation_id: str | None, run_id: str | None, api_key: ApiKey | None
) -> Conversation:
    readable = conversations_readable_by(api_key)
    if run_id is not None:
        runs = scoped(Run, tenant).filter(run_id=run_id)
        if readable is not None:
            runs = runs.filter(conversation_id__in=readable)
        if conversation_id is not None:
            runs = runs.filter(conversation__external_id=conversation_id)
        run = runs.select_related("conversation").first()
        if run is None:
            raise NotFound(no_history_for_run(run_id))
        return run.conversation
    if conversation_id is not None:
        conversations = scoped(Conversation, tenant).filter(external_id=conversation_id)
        if readable is not None:
            conversations = conversations.filter(pk__in=readable)
        conversation = conversations.first()
        if conversation is None:
            raise NotFound(no_history_for_conversation(conversation_id))
        return conversation
    raise SearchError("Reading context needs a conversation id or a run id.")


def read_context(
    tenant: Tenant,
    position: int,
    *,
    before: int = 5,
    after: int = 5,
    conversation_id: str | None = None,
    run_id: str | None = None,
    api_key: ApiKey | None = None,
) -> ContextWindow:
    """The message at `position` of a conversation (named directly, or through one of its runs) with the
    `before` messages preceding it and `after` following it, redacted; `NotFound` when it is not the caller's.

    Given both, the run must belong to the conversation (an agent in conversation scope reads only its own). A
    client `api_key` reads only conversations it wrote; any other answers as a missing one.
    """
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise SearchError(f"'position' must be a whole number from 0, got {position!r}.")
    before, after = _side("before", before), _side("after", after)
    conversation = _conversation(tenant, conversation_id, run_id, api_key)
    entries = (
        scoped(TranscriptEntry, tenant)
        .filter(conversation=conversation, summary_artifact=False, position__gte=position - before)
        .filter(position__lte=position + after)
        .order_by("position")
        .values_list("position", "run__run_id", "role", "timestamp", "text")
    )
    rules = rules_by_tenant([tenant])[tenant.id]
    messages = []
    for entry_position, entry_run, role, timestamp, text in entries:
        shown = redact(text, rules)
        cut = len(shown) > MAX_CONTEXT_MESSAGE_CHARS
        messages.append(
            ContextMessage(entry_position, entry_run, role, timestamp, shown[:MAX_CONTEXT_MESSAGE_CHARS], cut)
        )
    window = ContextWindow(conversation.external_id, position, messages)
    # Over the size cap, drop the messages farthest from the hit first.
    while len(window.messages) > 1 and encoded_size(window.as_dict()) > MAX_RESPONSE_BYTES:
        farthest = max(window.messages, key=lambda m: abs(m.position - position))
        window.messages.remove(farthest)
        window.truncated = True
    return window
