"""The full-text backend for the database in use: PostgreSQL (tsvector + GIN) or SQLite (FTS5)."""

from django.db import connection

from search_app.backends.base import Filters, Lookup, Scope, SearchBackend
from search_app.backends.postgres import PostgresBackend
from search_app.backends.sqlite import SqliteBackend

__all__ = ["Filters", "Lookup", "Scope", "SearchBackend", "backend_for_connection"]


def backend_for_connection() -> SearchBackend:
    if connection.vendor == "postgresql":
        return PostgresBackend()
    if connection.vendor == "sqlite":
        return SqliteBackend()
    raise NotImplementedError(f"Search has no backend for the {connection.vendor} database")
