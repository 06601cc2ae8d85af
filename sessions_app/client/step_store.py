"""A pydantic-ai-harness `StepStore` that lands every step in Sessiondesk as the agent runs.

    agent = Agent(model, capabilities=[StepPersistence(store=SessiondeskStepStore(url, api_key))])

Snapshots and tool-effect records are sent to the HTTP API; run records and events stay in a local in-memory
store, which also answers the capability's own reads (latest snapshot, unresolved tool effects). Needs the
`harness` extra, and never Django: this module runs inside the agent's process.

One HTTP connection pool per store (per event loop: an httpx client belongs to the loop that opened it), so a
step costs one request on a kept-alive connection.
"""

import asyncio
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai_harness.step_persistence import (
    ContinuableSnapshot,
    InMemoryStepStore,
    RunRecord,
    StepEvent,
    ToolEffectRecord,
)

from model_messages.serialization import messages_conversation_id


class SessiondeskError(RuntimeError):
    """The Sessiondesk API refused a write; the message is the API's own."""


class SessiondeskStepStore:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
        principal: str | None = None,
    ):
        # The end user or authorization this agent's history is loaded for (opaque; the server keeps a keyed hash).
        self._principal = principal
        self._base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._timeout = timeout
        self._client = client
        self._pools: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._local = InMemoryStepStore()
        # Tool effects are recorded before a run's first snapshot exists server-side; they wait until it does.
        self._runs_sent: set[str] = set()
        self._pending_effects: dict[str, list[ToolEffectRecord]] = {}

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self._base_url}/api/v1/{path}"
        response = await self._pool().post(url, json=body, headers=self._headers, timeout=self._timeout)
        if response.status_code >= 400:
            try:
                detail = response.json().get("error", response.text)
            except ValueError:
                detail = response.text
            raise SessiondeskError(f"{path}: {response.status_code} {detail}")
        answer: dict[str, Any] = response.json()
        return answer

    def _pool(self) -> httpx.AsyncClient:
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        for other in [other for other in self._pools if other.is_closed()]:
            del self._pools[other]  # its loop is gone (asyncio.run returned); the sockets went with it
        if loop not in self._pools:
            self._pools[loop] = httpx.AsyncClient()
        return self._pools[loop]

    async def aclose(self) -> None:
        """Close this loop's pool (optional: a finished loop's pool is dropped on the next request)."""
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.aclose()

    async def register_run(self, record: RunRecord) -> None:
        await self._local.register_run(record)

    async def get_run(self, *, run_id: str) -> RunRecord | None:
        return await self._local.get_run(run_id=run_id)

    async def list_runs(
        self, *, parent_run_id: str | None = None, conversation_id: str | None = None
    ) -> list[RunRecord]:
        return await self._local.list_runs(parent_run_id=parent_run_id, conversation_id=conversation_id)

    async def append_event(self, event: StepEvent) -> None:
        await self._local.append_event(event)

    async def list_events(self, *, run_id: str) -> list[StepEvent]:
        return await self._local.list_events(run_id=run_id)

    async def save_snapshot(self, snapshot: ContinuableSnapshot) -> None:
        run = await self._local.get_run(run_id=snapshot.run_id)
        conversation_id = (
            snapshot.conversation_id
            or (run.conversation_id if run else None)
            or messages_conversation_id(snapshot.messages)
            or snapshot.run_id
        )
        await self._post(
            "snapshots",
            {
                "conversation_id": conversation_id,
                "run_id": snapshot.run_id,
                "agent": snapshot.agent_name or (run.agent_name if run else None) or "",
                "parent_run_id": snapshot.parent_run_id,
                "step": snapshot.step_index,
                "state": snapshot.state,
                "idempotency_key": snapshot.idempotency_key,
                "started_at": run.started_at.isoformat() if run and run.started_at else None,
                "messages": ModelMessagesTypeAdapter.dump_python(snapshot.messages, mode="json"),
                **({"principal": self._principal} if self._principal else {}),
            },
        )
        await self._local.save_snapshot(snapshot)
        self._runs_sent.add(snapshot.run_id)
        for record in self._pending_effects.pop(snapshot.run_id, []):
            await self._send_tool_effect(record)

    async def latest_snapshot(self, *, run_id: str, include_interrupted: bool = False) -> ContinuableSnapshot | None:
        return await self._local.latest_snapshot(run_id=run_id, include_interrupted=include_interrupted)

    async def list_snapshots(self, *, run_id: str, include_interrupted: bool = False) -> list[ContinuableSnapshot]:
        return await self._local.list_snapshots(run_id=run_id, include_interrupted=include_interrupted)

    async def record_tool_effect(self, record: ToolEffectRecord) -> None:
        await self._local.record_tool_effect(record)
        if record.run_id in self._runs_sent:
            await self._send_tool_effect(record)
        else:
            self._pending_effects.setdefault(record.run_id, []).append(record)

    async def _send_tool_effect(self, record: ToolEffectRecord) -> None:
        await self._post(
            "tool-effects",
            {
                "run_id": record.run_id,
                "tool_call_id": record.tool_call_id,
                "tool_name": record.tool_name,
                "status": record.status,
                "started_at": record.started_at.isoformat() if record.started_at else None,
                "ended_at": record.ended_at.isoformat() if record.ended_at else None,
            },
        )

    async def get_tool_effect(self, *, run_id: str, tool_call_id: str) -> ToolEffectRecord | None:
        return await self._local.get_tool_effect(run_id=run_id, tool_call_id=tool_call_id)

    async def list_unresolved_tool_effects(self, *, run_id: str) -> list[ToolEffectRecord]:
        return await self._local.list_unresolved_tool_effects(run_id=run_id)
