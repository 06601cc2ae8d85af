"""Read import files into snapshot payloads: harness SqliteStepStore databases, .json and .jsonl files.

Reading never writes: a harness database is copied byte for byte (with its -wal file, if any) into a private
directory and only the copy is ever opened, by sqlite3 and by pydantic-ai-harness's own store class (which
migrates schemas on open); nothing appears beside the user's file. JSON is decoded by the API's own strict
decoder (UTF-8, bounded depth, no NUL or lone surrogates).
"""

import asyncio
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import batched
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter

from input_errors import RejectedInput
from model_messages.serialization import messages_conversation_id
from sessions_app.core.api_input import decode_json, find_unsafe_string
from sessions_app.ingest.message_memo import MEMO
from sessions_app.ingest.payloads import (
    IngestError,
    SnapshotPayload,
    ToolEffectPayload,
    parse_snapshot,
    parse_tool_effect,
)

SQLITE_MAGIC = b"SQLite format 3\x00"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
HARNESS_TABLES = {"runs", "snapshots"}


CHUNK_SNAPSHOTS = 500  # snapshots read and ingested at a time: memory follows the chunk, not the file
CHUNK_RUNS = 100  # harness runs read at a time


@dataclass(frozen=True)
class ImportBatch:
    snapshots: list[SnapshotPayload]
    tool_effects: list[ToolEffectPayload]


def read_import_file(path: Path) -> ImportBatch:
    """Everything one file holds, or IngestError naming the file's problem (`iter_import_file` in one piece)."""
    chunks = list(iter_import_file(path))
    return ImportBatch(
        [s for chunk in chunks for s in chunk.snapshots], [e for chunk in chunks for e in chunk.tool_effects]
    )


def iter_import_file(path: Path) -> Iterator[ImportBatch]:
    """What one file holds, a chunk at a time (a harness store's tool effects with their runs' chunk), or an
    IngestError naming the file's problem, raised when the reading reaches it."""
    try:
        head = path.open("rb").read(len(SQLITE_MAGIC))
    except OSError as error:
        raise IngestError(f"Cannot read {path}: {error.strerror}.") from None
    if head == SQLITE_MAGIC:
        yield from _read_harness_sqlite(path)
    elif path.suffix == ".jsonl":
        for chunk in batched(_read_jsonl(path), CHUNK_SNAPSHOTS):
            yield ImportBatch(list(chunk), [])
    elif path.suffix == ".json":
        yield ImportBatch([_read_json(path)], [])
    else:
        raise IngestError(f"{path}: not a SQLite database, .json or .jsonl file.")


def _load_json(raw: bytes, where: str) -> object:
    try:
        return decode_json(raw)
    except RejectedInput as error:
        raise IngestError(f"{where}: {error.message}") from None


def _read_json(path: Path) -> SnapshotPayload:
    data = _load_json(path.read_bytes(), str(path))
    if isinstance(data, list):
        data = _bare_message_list(path, data)
    try:
        return parse_snapshot(data)
    except IngestError as error:
        raise IngestError(f"{path}: {error.message}") from None


def _bare_message_list(path: Path, messages: list[Any]) -> dict[str, Any]:
    """A plain message list becomes one complete snapshot; ids come from the messages, else from the file name."""

    def first(key: str) -> str | None:
        return next((m.get(key) for m in messages if isinstance(m, dict) and m.get(key)), None)

    return {
        "conversation_id": first("conversation_id") or path.stem,
        "run_id": first("run_id") or f"{path.stem}-import",
        "state": "complete",
        "messages": messages,
    }


def _read_jsonl(path: Path) -> Iterator[SnapshotPayload]:
    with path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                yield parse_snapshot(_load_json(line, where), strings_checked=True)
            except IngestError as error:
                message = error.message if error.message.startswith(where) else f"{where}: {error.message}"
                raise IngestError(message) from None


def _harness_tables(copy: Path, path: Path) -> set[str]:
    try:
        conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
        try:
            return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as error:
        raise IngestError(f"{path}: unreadable SQLite database ({error}).") from None


def _read_harness_sqlite(path: Path) -> Iterator[ImportBatch]:
    with tempfile.TemporaryDirectory() as workdir:
        copy = Path(workdir) / "store.sqlite3"
        shutil.copyfile(path, copy)
        if Path(f"{path}-wal").exists():
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")
        yield from _read_harness_copy(copy, path)


def _read_harness_copy(copy: Path, path: Path) -> Iterator[ImportBatch]:
    tables = _harness_tables(copy, path)
    missing = HARNESS_TABLES - tables
    if missing:
        raise IngestError(
            f"{path}: not a pydantic-ai-harness SqliteStepStore database "
            f"(missing tables: {', '.join(sorted(missing))})."
        )
    try:
        # Not at the top: pydantic-ai-harness is an optional extra; only harness databases need it.
        from pydantic_ai_harness.step_persistence import SqliteStepStore
    except ImportError:
        raise IngestError(
            "Importing harness databases needs pydantic-ai-harness: pip install 'sessiondesk[harness]'."
        ) from None
    store = SqliteStepStore(database=copy)
    try:
        runs = asyncio.run(store.list_runs())
        effects = _effects_by_run(_harness_tool_effects(copy, path) if "tool_effects" in tables else [])
        chunks = list(batched(runs, CHUNK_RUNS))
        for index, chunk in enumerate(chunks):
            snapshots = checked_strings(asyncio.run(harness_snapshots(store, chunk)), str(path))
            # Each chunk's runs bring their own effects, so a chunk touches (and audits) only its runs; the effects
            # of runs the store does not list come last, where ingestion names an unknown run.
            owned = [e for run in chunk for e in effects.pop(run.run_id, [])]
            rest = [e for run_effects in effects.values() for e in run_effects] if index == len(chunks) - 1 else []
            yield ImportBatch(snapshots, owned + rest)
    except (sqlite3.DatabaseError, ValueError, KeyError) as error:
        raise IngestError(f"{path}: unreadable harness database ({str(error)[:200]}).") from None


def checked_strings(snapshots: list[SnapshotPayload], where: str) -> list[SnapshotPayload]:
    """`snapshots`, or an IngestError naming the first string no store can hold (a NUL, a lone surrogate).

    A harness store keeps each step's whole history, so a run's snapshots repeat their messages, each copy validated
    on its own. Every copy is replaced by the one message object kept for its bytes (`MEMO`): ingestion then dumps
    and hashes each distinct message once (it finds the object's bytes and hashes in the memo), recovery's hash
    memo hits on identity, and the strings are checked once per distinct message, on its JSON text (NUL escaped as
    \\u0000, a lone surrogate kept as it is); a message whose text shows either is walked to name the path.
    """
    checked: dict[str, bool] = {}
    canonical = []
    for snapshot in snapshots:
        messages = []
        for message in snapshot.messages:
            try:
                known = MEMO.keep(message)
            except ValueError:  # a lone surrogate does not encode: walked below
                known = None
            plain = None if known is None else checked.get(known.sha256)
            if plain is None and known is not None:
                plain = checked[known.sha256] = _plain_text(known.dumped)
            if not plain:
                unsafe = find_unsafe_string(ModelMessagesTypeAdapter.dump_python(snapshot.messages, mode="json"))
                if unsafe:
                    raise IngestError(f"{where}: run {snapshot.run_id!r}, messages{unsafe[0]} {unsafe[1]}.")
            messages.append(known.message if known is not None else message)
        canonical.append(replace(snapshot, messages=messages))
    return canonical


def _plain_text(dumped: str) -> bool:
    """JSON text holding no escaped NUL and no lone surrogate: no string in it that a store cannot hold."""
    return "\\u0000" not in dumped and not _SURROGATE.search(dumped)


async def harness_snapshots(store: Any, runs: Sequence[Any]) -> list[SnapshotPayload]:
    """Every snapshot of `runs` (harness RunRecords) that `store` (any harness store) keeps, interrupted too."""
    payloads = []
    for run in runs:
        for snapshot in await store.list_snapshots(run_id=run.run_id, include_interrupted=True):
            payloads.append(
                SnapshotPayload(
                    conversation_id=run.conversation_id
                    or snapshot.conversation_id
                    or messages_conversation_id(snapshot.messages)
                    or run.run_id,
                    run_id=run.run_id,
                    agent=run.agent_name or snapshot.agent_name or "",
                    parent_run_id=run.parent_run_id or "",
                    step=snapshot.step_index,
                    state=snapshot.state,
                    idempotency_key=snapshot.idempotency_key or "",
                    messages=list(snapshot.messages),
                    started_at=run.started_at,
                )
            )
    return payloads


def _parse_time(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def _effects_by_run(effects: Sequence[ToolEffectPayload]) -> dict[str, list[ToolEffectPayload]]:
    """The effects grouped by run, each run's in the order written (the last record of a call wins)."""
    grouped: dict[str, list[ToolEffectPayload]] = {}
    for effect in effects:
        grouped.setdefault(effect.run_id, []).append(effect)
    return grouped


def _harness_tool_effects(copy: Path, path: Path) -> list[ToolEffectPayload]:
    conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT run_id, tool_call_id, tool_name, status, started_at, ended_at FROM tool_effects"
        ).fetchall()
    finally:
        conn.close()
    effects = []
    for run_id, call_id, name, status, started, ended in rows:
        try:
            effect = parse_tool_effect({"run_id": run_id, "tool_call_id": call_id, "tool_name": name, "status": status})
        except IngestError as error:
            raise IngestError(f"{path}: tool effect {call_id!r}: {error.message}") from None
        effects.append(replace(effect, started_at=_parse_time(started), ended_at=_parse_time(ended)))
    return effects
