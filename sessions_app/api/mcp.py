"""/mcp: the Model Context Protocol over streamable HTTP, for coding agents and operators' assistants.

The protocol is the official `mcp` SDK's (`MCPServer`, its `StreamableHTTPSessionManager`); this module only
bridges it into a Django view, so it runs under gunicorn's sync workers and runserver alike: each request is
authenticated by `api_key_required` (the same Bearer API keys, the same 401/403), then handed to a stateless
session manager in JSON-response mode (no session to keep between requests, no stream to hold open), whose
ASGI handler is driven once per request inside `async_to_sync`. The tools run their ORM work through
`sync_to_async`, which asgiref runs back on the request's own thread, with its connection and transaction.

Every tool answers exactly what the JSON API answers (`api/reads`: the same validation models, scoping,
redaction and client-key limits); refused input comes back as a tool error naming the problem, as the API's
400/404 message.
"""

from collections.abc import Callable, MutableMapping
from contextvars import ContextVar
from threading import Lock
from typing import Any, Literal

import anyio
from asgiref.sync import async_to_sync, sync_to_async
from django.http import HttpResponse, QueryDict
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from input_errors import RejectedInput
from sessions_app.api import reads
from sessions_app.api.auth import ApiRequest, api_key_required
from sessions_app.api.search_params import SEARCH_SYNTAX, ContextParams, SearchParams, _Params, parse_params
from sessions_app.models import ApiKey

_key: ContextVar[ApiKey] = ContextVar("sessiondesk_mcp_key")

server = MCPServer(
    name="sessiondesk",
    instructions=(
        "Sessiondesk holds AI-agent conversations: their recovered transcripts, runs and replay audits. Search "
        "them, read the messages around a hit, list conversations, read a run's verdict with what to do next, "
        "and ask whether a conversation may be resumed."
    ),
)

type Answer = dict[str, Any]


def _as_query(values: dict[str, object]) -> QueryDict:
    """Tool arguments as the query string the API would have been given, so one model validates both doors."""
    query = QueryDict(mutable=True)
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, list):
            query.setlist(name, [str(item) for item in value])
        else:
            query[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return query


def _params[M: _Params](model: type[M], **values: object) -> M:
    return parse_params(model, _as_query(values))


async def _answer(read: Callable[[ApiKey], Answer]) -> Answer:
    def call() -> Answer:
        try:
            return read(_key.get())
        except RejectedInput as error:
            raise ToolError(error.message) from None

    return await sync_to_async(call)()


@server.tool(description=f"Ranked search of the stored conversations (BM25). Query syntax: {SEARCH_SYNTAX}")
async def search_sessions(
    q: str,
    scope: Literal["conversation", "run", "tenant"] = "conversation",
    conversation_id: str | None = None,
    run_id: str | None = None,
    agent: str | None = None,
    roles: list[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Answer:
    """`scope` conversation needs `conversation_id`, run needs `run_id`; tenant searches everything. Times are ISO
    8601 with a timezone; pass a previous answer's `next_cursor` as `cursor` for its next page."""
    return await _answer(
        lambda key: reads.search(
            key,
            _params(
                SearchParams,
                q=q,
                scope=scope,
                conversation_id=conversation_id,
                run_id=run_id,
                agent=agent,
                role=roles,
                since=since,
                until=until,
                limit=limit,
                cursor=cursor,
            ),
        )
    )


@server.tool(description="The messages around one transcript position of a conversation (or of a run's).")
async def read_conversation_context(
    around: int,
    conversation_id: str | None = None,
    run_id: str | None = None,
    before: int = 5,
    after: int = 5,
) -> Answer:
    """`around` is a hit's `position`; name the conversation, or the run the hit came from."""
    return await _answer(
        lambda key: reads.context(
            key, conversation_id, _params(ContextParams, around=around, run_id=run_id, before=before, after=after)
        )
    )


@server.tool(
    description="The conversations, newest activity first, with runs, turns, tool calls, tokens and the worst verdict."
)
async def list_conversations(
    state: Literal["running", "complete", "interrupted"] | None = None,
    agent: str | None = None,
    verdict: str | None = None,
    has_repairs: bool = False,
    since: str | None = None,
    until: str | None = None,
    sort: Literal["recent", "oldest", "largest"] = "recent",
    limit: int = 50,
    cursor: str | None = None,
    view: str | None = None,
) -> Answer:
    """Every filter only narrows, `view` (a saved view's name) too; pass a previous answer's `next_cursor` as
    `cursor` for its next page."""
    params: dict[str, object] = {"state": state, "agent": agent, "verdict": verdict, "has_repairs": has_repairs}
    params |= {"since": since, "until": until, "sort": sort, "limit": limit, "cursor": cursor, "view": view}
    return await _answer(lambda key: reads.list_conversations(key, _params(reads.ConversationListParams, **params)))


@server.tool(description="One conversation with its triage columns and its runs (state, agent, verdict).")
async def get_conversation(conversation_id: str) -> Answer:
    return await _answer(lambda key: reads.get_conversation(key, conversation_id))


@server.tool(
    description="A run with its snapshots and tool-effect ledger; an effect started and never ended after the run "
    "stopped says 'outcome unknown after crash': query the destination before any retry."
)
async def get_run(run_id: str) -> Answer:
    return await _answer(lambda key: reads.get_run(key, run_id))


@server.tool(description="A run's replay-audit verdict with every finding and the guidance on what to do next.")
async def run_verdict(run_id: str) -> Answer:
    return await _answer(lambda key: reads.run_verdict(key, run_id))


@server.tool(description="Whether a conversation may be resumed now (READY), else its findings with guidance.")
async def replay_readiness(conversation_id: str, principal: str | None = None) -> Answer:
    return await _answer(lambda key: reads.replay_readiness(key, conversation_id, principal))


# Django checks the Host header (ALLOWED_HOSTS) before this view, and the key rides in a header a browser does
# not send on its own, so the SDK's DNS-rebinding guard would only repeat that with a second host list.
_TRANSPORT = TransportSecuritySettings(enable_dns_rebinding_protection=False)
_manager_lock = Lock()


def _new_manager() -> StreamableHTTPSessionManager:
    # A manager runs once; `streamable_http_app` makes a fresh one and leaves it on the server, so under
    # runserver's threads two requests take turns to pick theirs up.
    with _manager_lock:
        server.streamable_http_app(stateless_http=True, json_response=True, transport_security=_TRANSPORT)
        return server.session_manager


type Message = MutableMapping[str, Any]


async def _serve(key: ApiKey, scope: Message, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    _key.set(key)
    start: Message = {}
    chunks: list[bytes] = []
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()  # the client stays connected until the answer is written
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    manager = _new_manager()
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return int(start.get("status", 500)), list(start.get("headers", [])), b"".join(chunks)


def _scope(request: ApiRequest) -> Message:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": "",
        "headers": headers,
        "server": (request.get_host(), int(request.get_port())),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


@api_key_required
def mcp_endpoint(request: ApiRequest) -> HttpResponse:
    status, headers, body = async_to_sync(_serve)(request.api_key, _scope(request), request.body)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() != b"content-length":
            response[name.decode("latin-1")] = value.decode("latin-1")
    response["Cache-Control"] = "no-store, private"
    return response
