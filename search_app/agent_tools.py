"""The agent search tools in the same process as Sessiondesk: a `SearchClient` that calls search_app directly.

    agent = Agent(model, capabilities=[SessiondeskSearch(client=InProcessSearchClient(tenant))])

The capability itself, and the HTTP client for agents in other processes, are in sessions_app.client.search.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections

from search_app.context import read_context
from search_app.service import run_search
from sessions_app.models import Tenant


class InProcessSearchClient:
    """Same database: calls the service directly. `SearchError`/`NotFound` pass through."""

    def __init__(self, tenant: Tenant | str) -> None:
        self._tenant = tenant

    def _resolve(self) -> Tenant:
        return self._tenant if isinstance(self._tenant, Tenant) else Tenant.objects.get(slug=self._tenant)

    def search(
        self, *, query: str, conversation_id: str, run_id: str | None, limit: int, cursor: str | None = None
    ) -> dict[str, Any]:
        with _closing_thread_connection():
            response = run_search(
                tenant=self._resolve(),
                query=query,
                scope="conversation",
                conversation_id=conversation_id,
                run_id=run_id,
                limit=limit,
                cursor=cursor,
            )
            return response.as_dict()

    def context(self, *, conversation_id: str, run_id: str, position: int, before: int, after: int) -> dict[str, Any]:
        with _closing_thread_connection():
            tenant = self._resolve()
            window = read_context(
                tenant, position, before=before, after=after, run_id=run_id, conversation_id=conversation_id
            )
            return window.as_dict()


@contextmanager
def _closing_thread_connection() -> Iterator[None]:
    # pydantic-ai runs sync tools in worker threads; each would otherwise keep its own database connection open.
    try:
        yield
    finally:
        if threading.current_thread() is not threading.main_thread():
            connections.close_all()
