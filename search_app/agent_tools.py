"""The agent search tools in the same process as Sessiondesk: a `SearchClient` that calls search_app.service.

    agent = Agent(model, capabilities=[SessiondeskSearch(client=InProcessSearchClient(tenant))])

The capability itself, and the HTTP client for agents in other processes, are in sessions_app.client.search.
"""

import threading
from typing import Any

from django.db import connections

from search_app.service import read_context, run_search
from sessions_app.models import Tenant


class InProcessSearchClient:
    """Same database: calls the service directly. `SearchError`/`NotFound` pass through."""

    def __init__(self, tenant: Any) -> None:
        self._tenant = tenant

    def _resolve(self):
        return self._tenant if isinstance(self._tenant, Tenant) else Tenant.objects.get(slug=self._tenant)

    def search(
        self, *, query: str, conversation_id: str, run_id: str | None, limit: int, cursor: str | None = None
    ) -> dict:
        try:
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
        finally:
            _release_thread_connection()

    def context(self, *, conversation_id: str, run_id: str, position: int, before: int, after: int) -> dict:
        try:
            window = read_context(
                tenant=self._resolve(),
                conversation_id=conversation_id,
                run_id=run_id,
                position=position,
                before=before,
                after=after,
            )
            return window.as_dict()
        finally:
            _release_thread_connection()


def _release_thread_connection() -> None:
    # pydantic-ai runs sync tools in worker threads; each would otherwise keep its own database connection open.
    if threading.current_thread() is not threading.main_thread():
        connections.close_all()
