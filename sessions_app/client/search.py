"""Search for agents: a pydantic-ai capability and toolset over Sessiondesk. Runs in the agent's process: no Django.

`SessiondeskSearch(client=...)` gives an agent `search_conversation_history(query, run_id=None)` and
`read_conversation_context(run_id, position, before, after)`. It replaces pydantic-ai-harness's
`ConversationSearch` for an agent whose steps land in Sessiondesk: the search reads the persistent index
instead of rebuilding a corpus on every call, over the recovered transcript (nothing repeated by compaction),
and never sees its own past calls. Scope is the calling run's conversation (`RunContext.conversation_id`);
without one it searches nothing and says why. Results name their run and conversation, as the reference's do.

Two clients: `HttpSearchClient(base_url, api_key)` calls the /api/v1 endpoints with a tenant API key (here);
`search_app.agent_tools.InProcessSearchClient(tenant)` calls search_app.service in the same database.
"""

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, Protocol
from urllib.parse import quote

import httpx
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.toolsets import AgentToolset, FunctionToolset

from search_app.errors import NEEDS_CONVERSATION, NotFound, SearchError

SEARCH_DESCRIPTION = """\
Search this conversation's persisted history: earlier turns, including messages that context compaction \
dropped from the live context, and earlier runs of the same conversation. Ranked by BM25: rare words and exact \
matches score higher; each word scores on its own. Use "quoted phrases", -word to exclude, prefix* for \
prefixes. Identifiers such as ticket ids, file names and flags can be searched as written. Each result names \
its run, conversation and position; pass `run_id` to search one run only, and open a result with \
read_conversation_context(run_id, position) to see the messages around it.

Use it when the current context or a compaction summary lacks an exact detail you need."""

READ_DESCRIPTION = """\
Read the messages around one position of this conversation's transcript (as returned by \
search_conversation_history): the message itself, `before` messages before it and `after` after it."""

INSTRUCTIONS = (
    "A `search_conversation_history` tool retrieves exact details from this conversation's persisted history, "
    "including earlier turns that context compaction has dropped. Reach for it when the current context, or a "
    "compaction summary, lacks a detail you need."
)


class SearchClient(Protocol):
    """Where the tools get answers: the JSON shapes of GET /api/v1/search and .../messages."""

    def search(
        self, *, query: str, conversation_id: str, run_id: str | None, limit: int, cursor: str | None = None
    ) -> dict[str, Any]: ...

    def context(
        self, *, conversation_id: str, run_id: str, position: int, before: int, after: int
    ) -> dict[str, Any]: ...


class HttpSearchClient:
    """Another process: the /api/v1 endpoints with a tenant API key (`Authorization: Bearer`)."""

    def __init__(self, base_url: str, api_key: str, *, client: httpx.Client | None = None, timeout: float = 10.0):
        self._client = client or httpx.Client(base_url=base_url, timeout=timeout)
        self._base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}

    def _get(self, path: str, params: Mapping[str, Any]) -> dict[str, Any]:
        response = self._client.get(
            f"{self._base_url}{path}",
            params={k: v for k, v in params.items() if v is not None},
            headers=self._headers,
        )
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        if response.status_code == 404:
            raise NotFound(body.get("error", "Not found."))
        if response.status_code == 400:
            raise SearchError(body.get("error", "Bad request."))
        response.raise_for_status()
        return body

    def search(
        self, *, query: str, conversation_id: str, run_id: str | None, limit: int, cursor: str | None = None
    ) -> dict[str, Any]:
        params = {"q": query, "scope": "conversation", "conversation_id": conversation_id, "run_id": run_id}
        return self._get("/api/v1/search", {**params, "limit": limit, "cursor": cursor})

    def context(self, *, conversation_id: str, run_id: str, position: int, before: int, after: int) -> dict[str, Any]:
        return self._get(
            f"/api/v1/conversations/{quote(conversation_id, safe='')}/messages",
            {"around": position, "before": before, "after": after, "run_id": run_id},
        )


# A hit compaction dropped: the agent no longer has it in front of it, only this record does.
_DROPPED = "(dropped from your live context by compaction; only this record keeps it)\n"


def format_search(query: str, body: dict[str, Any]) -> str:
    """The tool's answer, in the reference tool's shape: a header, then one block per hit."""
    if body.get("message"):
        message: str = body["message"]
        return message
    results = body.get("results", [])
    note = (
        "\n(The index is catching up: recent messages are searched all the same; a conversation being re-indexed is "
        "left out until done.)"
        if body.get("indexing")
        else ""
    )
    if not results:
        return f"No matches for '{query}' in this conversation's persisted history.{note}"
    blocks = [
        f"[score: {hit['score']:.2f} | run: {hit['run_id']} | conversation: {hit['conversation_id']} | "
        f"position: {hit['position']} | {hit['role']}]\n{_DROPPED if hit.get('in_live_context') is False else ''}"
        f"{hit['snippet']}"
        for hit in results
    ]
    total = body.get("total_matches", len(results))
    first = body.get("offset", 0) + 1
    shown = "" if first == 1 and total == len(results) else f"; showing {first} to {first + len(results) - 1}"
    header = f"Found {total} match(es) for '{query}'{shown}:{note}\n\n"
    footer = "\n\nOpen a result with read_conversation_context(run_id, position)."
    if body.get("next_cursor"):
        footer += f"\nMore matches: call search_conversation_history again with cursor='{body['next_cursor']}'."
    return header + "\n\n---\n\n".join(blocks) + footer


def format_context(body: dict[str, Any]) -> str:
    lines = [f"Conversation {body['conversation_id']}, around position {body['around']}:"]
    for message in body["messages"]:
        cut = " […]" if message.get("cut") else ""
        lines.append(f"[{message['position']}] {message['role']} (run {message['run_id']}): {message['text']}{cut}")
    if len(lines) == 1:
        lines.append("(no messages at these positions)")
    return "\n".join(lines)


class SessiondeskSearchToolset(FunctionToolset[AgentDepsT]):
    def __init__(self, client: SearchClient, *, tool_id: str, max_matches: int, context_messages: int) -> None:
        super().__init__(id=tool_id)
        self._client = client
        self._max_matches = max_matches
        self._context_messages = context_messages
        self.add_function(
            self.search_conversation_history, name="search_conversation_history", description=SEARCH_DESCRIPTION
        )
        self.add_function(
            self.read_conversation_context, name="read_conversation_context", description=READ_DESCRIPTION
        )

    def search_conversation_history(
        self, ctx: RunContext[AgentDepsT], query: str, run_id: str | None = None, cursor: str | None = None
    ) -> str:
        """Search persisted conversation history.

        Args:
            ctx: The run context.
            query: Words to search for; rare words weigh more.
            run_id: Only this run's history.
            cursor: The cursor a previous answer gave for its next matches (same query and run_id).
        """
        if ctx.conversation_id is None:
            return NEEDS_CONVERSATION
        try:
            body = self._client.search(
                query=query,
                conversation_id=ctx.conversation_id,
                run_id=run_id,
                limit=self._max_matches,
                cursor=cursor,
            )
        except SearchError as error:
            return f"The search was not run: {error}"
        return format_search(query, body)

    def read_conversation_context(
        self,
        ctx: RunContext[AgentDepsT],
        run_id: str,
        position: int,
        before: int | None = None,
        after: int | None = None,
    ) -> str:
        """Read messages around a position of this conversation's transcript.

        Args:
            ctx: The run context.
            run_id: The run a search result named.
            position: The position a search result named.
            before: Messages to show before it.
            after: Messages to show after it.
        """
        if ctx.conversation_id is None:
            return NEEDS_CONVERSATION
        before = self._context_messages if before is None else before
        after = self._context_messages if after is None else after
        try:
            body = self._client.context(
                conversation_id=ctx.conversation_id, run_id=run_id, position=position, before=before, after=after
            )
        except NotFound as error:
            return str(error)
        except SearchError as error:
            return f"Nothing was read: {error}"
        return format_context(body)


@dataclass
class SessiondeskSearch(AbstractCapability[AgentDepsT]):
    """Conversation-scoped search over Sessiondesk's persistent index, for an agent whose steps land there."""

    client: SearchClient
    tool_id: str = "sessiondesk-search"
    max_matches: int = 10
    context_messages: int = 5
    add_instructions: bool = True
    _: KW_ONLY
    id: str | None = "sessiondesk_search"

    def __post_init__(self) -> None:
        if not 1 <= self.max_matches <= 25:
            raise ValueError(f"max_matches must be from 1 to 25, got {self.max_matches!r}")
        if not 0 <= self.context_messages <= 25:
            raise ValueError(f"context_messages must be from 0 to 25, got {self.context_messages!r}")

    def get_toolset(self) -> AgentToolset[AgentDepsT] | None:
        return SessiondeskSearchToolset[AgentDepsT](
            self.client, tool_id=self.tool_id, max_matches=self.max_matches, context_messages=self.context_messages
        )

    def get_instructions(self) -> str | None:
        return INSTRUCTIONS if self.add_instructions else None
