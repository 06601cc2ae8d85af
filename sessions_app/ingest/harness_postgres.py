"""Import from a pydantic-ai-harness PostgresStepStore: what is new since the last import, through ingest/service.

The snapshots and runs are read by the harness's own `PostgresStepStore` (message references, externalized
media, schema changes are its business) over an asyncpg pool; only what its class does not offer is read with
SQL on the tables it documents: which runs have snapshot rows past the cursor (`{table}_snapshots.seq`), and the
tool-effect ledger of those runs. Each import is one transaction: the snapshots, the tool effects and the cursor
commit together, so an import that fails leaves the cursor where it was and the next one reads the same rows.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import batched
from typing import Any
from urllib.parse import urlparse

from django.db import transaction
from django.utils import timezone

from sessions_app.ingest.importers import CHUNK_RUNS, checked_strings, harness_snapshots
from sessions_app.ingest.payloads import IngestError, SnapshotPayload, ToolEffectPayload, parse_tool_effect
from sessions_app.ingest.service import IngestResult, ingest_snapshots
from sessions_app.models import HarnessImportCursor, Tenant
from sessions_app.tenancy.scoping import scoped

# Snapshot rows are numbered when inserted but visible when committed: a row numbered below the highest one read
# can appear later (a longer transaction). Rows this far below the cursor are looked at again, by their seq.
OVERLAP = 1000


@dataclass(frozen=True)
class HarnessStore:
    dsn: str
    table: str = "step_persistence"

    @property
    def label(self) -> str:
        """Who the cursor belongs to: the DSN without its password, and the table prefix."""
        url = urlparse(self.dsn)
        user = f"{url.username}@" if url.username else ""
        port = f":{url.port}" if url.port else ""
        return f"{user}{url.hostname or ''}{port}{url.path} {self.table}"[:400]


@dataclass
class HarnessRead:
    chunks: list[tuple[list[SnapshotPayload], list[ToolEffectPayload]]] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)


def _new_seqs(rows: Sequence[tuple[int, str]], cursor: HarnessImportCursor) -> tuple[list[int], set[str]]:
    seen = set(cursor.recent_seqs)
    fresh = [(seq, run_id) for seq, run_id in rows if seq not in seen]
    return [seq for seq, _ in rows], {run_id for _, run_id in fresh}


def _parse_time(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


async def _read(store_spec: HarnessStore, cursor: HarnessImportCursor) -> HarnessRead:
    try:
        # Not at the top: asyncpg and pydantic-ai-harness are the optional `harness` extra.
        import asyncpg
        from pydantic_ai_harness.step_persistence import PostgresStepStore
    except ImportError:
        raise IngestError(
            "Importing a harness PostgresStepStore needs asyncpg and pydantic-ai-harness: "
            "pip install 'sessiondesk[harness]'."
        ) from None
    try:
        pool = await asyncpg.create_pool(store_spec.dsn, min_size=1, max_size=2)
    except (OSError, ValueError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        raise IngestError(f"{store_spec.label}: cannot connect ({type(error).__name__}: {error}).") from None
    try:
        return await _read_store(pool, PostgresStepStore(pool, table=store_spec.table), store_spec, cursor)
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, KeyError) as error:
        raise IngestError(f"{store_spec.label}: unreadable store ({type(error).__name__}: {error}).") from None
    finally:
        await pool.close()


async def _read_store(pool: Any, store: Any, store_spec: HarnessStore, cursor: HarnessImportCursor) -> HarnessRead:
    # Not at the top: pydantic-ai-harness is the optional `harness` extra (as in _read).
    from pydantic_ai_harness.step_persistence import RunRecord

    table = store_spec.table  # the harness's class refused any name that is not a plain lowercase identifier
    async with pool.acquire() as connection:
        # The harness's class creates its tables when missing; a mistyped DSN or prefix must not leave empty
        # ones behind in someone's database.
        missing = [
            name
            for name in (f"{table}_runs", f"{table}_snapshots")
            if await connection.fetchval("SELECT to_regclass($1)", name) is None
        ]
        if missing:
            raise IngestError(
                f"{store_spec.label}: not a pydantic-ai-harness PostgresStepStore (missing tables: "
                f"{', '.join(missing)}; pass its table prefix with --table)."
            )
        rows = await connection.fetch(
            f"SELECT seq, run_id FROM {table}_snapshots WHERE seq > $1 ORDER BY seq",  # noqa: S608  # a checked identifier
            max(0, cursor.last_seq - OVERLAP),
        )
        has_effects = await connection.fetchval("SELECT to_regclass($1)", f"{table}_tool_effects") is not None
    read = HarnessRead()
    read.seqs, run_ids = _new_seqs([(int(seq), str(run_id)) for seq, run_id in rows], cursor)
    for chunk in batched(sorted(run_ids), CHUNK_RUNS):
        runs: list[Any] = []
        for run_id in chunk:
            record = await store.get_run(run_id=run_id)
            runs.append(record if record is not None else RunRecord(run_id=run_id))
        snapshots = checked_strings(await harness_snapshots(store, runs), store_spec.label)
        effects: list[ToolEffectPayload] = []
        if has_effects:
            async with pool.acquire() as connection:
                effect_rows = await connection.fetch(
                    f"SELECT run_id, tool_call_id, tool_name, status, started_at, ended_at "  # noqa: S608  # as above
                    f"FROM {table}_tool_effects WHERE run_id = ANY($1::text[]) ORDER BY run_id, tool_call_id",
                    list(chunk),
                )
            effects = [_tool_effect(row, store_spec) for row in effect_rows]
        read.chunks.append((snapshots, effects))
    return read


def _tool_effect(row: Sequence[Any], store_spec: HarnessStore) -> ToolEffectPayload:
    run_id, call_id, name, status, started, ended = row
    try:
        effect = parse_tool_effect({"run_id": run_id, "tool_call_id": call_id, "tool_name": name, "status": status})
    except IngestError as error:
        raise IngestError(f"{store_spec.label}: tool effect {call_id!r}: {error.message}") from None
    return replace(effect, started_at=_parse_time(started), ended_at=_parse_time(ended))


def _advance(cursor: HarnessImportCursor, seqs: Sequence[int]) -> None:
    last = max([cursor.last_seq, *seqs])
    recent = {s for s in [*cursor.recent_seqs, *seqs] if s > last - OVERLAP}
    cursor.last_seq, cursor.recent_seqs = last, sorted(recent)


def import_new(tenant: Tenant, store_spec: HarnessStore, *, source: str) -> IngestResult:
    """Import the store's runs that have snapshots the last import did not read; a second import adds nothing.

    One transaction: ingest (chunk by chunk, as a file import) and the cursor commit together.
    """
    total = IngestResult()
    with transaction.atomic():
        cursor, _ = (
            scoped(HarnessImportCursor, tenant).select_for_update().get_or_create(tenant=tenant, store=store_spec.label)
        )
        try:
            read = asyncio.run(_read(store_spec, cursor))
        except IngestError:
            raise
        except ValueError as error:  # the harness's class refusing the table prefix
            raise IngestError(f"{store_spec.label}: {error}.") from None
        for snapshots, effects in read.chunks:
            total.add(ingest_snapshots(tenant, snapshots, source=source, via="import", tool_effects=effects))
        _advance(cursor, read.seqs)
        # Updated by tenant and id, its tenant left as it is: a save() would set tenant_id again, which Citus
        # refuses on its distribution column ("modifying the partition value of rows is not allowed").
        scoped(HarnessImportCursor, tenant).filter(pk=cursor.pk).update(
            last_seq=cursor.last_seq, recent_seqs=cursor.recent_seqs, updated_at=timezone.now()
        )
    return total
