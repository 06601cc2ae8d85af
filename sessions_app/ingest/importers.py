"""Read import files into snapshot payloads: harness SqliteStepStore databases, .json and .jsonl files.

Reading never writes: a harness database is validated read-only, then opened through pydantic-ai-harness's own
store class on a private copy (the class migrates schemas on open, and the user's file must stay untouched).
"""

import asyncio
import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sessions_app.core.serialization import messages_conversation_id
from sessions_app.ingest.payloads import IngestError, SnapshotPayload, ToolEffectPayload, parse_snapshot

SQLITE_MAGIC = b"SQLite format 3\x00"
HARNESS_TABLES = {"runs", "snapshots"}


@dataclass(frozen=True)
class ImportBatch:
    snapshots: list[SnapshotPayload]
    tool_effects: list[ToolEffectPayload]


def read_import_file(path: Path) -> ImportBatch:
    """Everything one file holds, or IngestError naming the file's problem."""
    try:
        head = path.open("rb").read(len(SQLITE_MAGIC))
    except OSError as error:
        raise IngestError(f"Cannot read {path}: {error.strerror}.") from None
    if head == SQLITE_MAGIC:
        return _read_harness_sqlite(path)
    if path.suffix == ".jsonl":
        return ImportBatch(_read_jsonl(path), [])
    if path.suffix == ".json":
        return ImportBatch([_read_json(path)], [])
    raise IngestError(f"{path}: not a SQLite database, .json or .jsonl file.")


def _load_json(text: str, where: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise IngestError(f"{where}: invalid JSON: {error}.") from None


def _read_json(path: Path) -> SnapshotPayload:
    data = _load_json(path.read_text(encoding="utf-8"), str(path))
    if isinstance(data, list):
        data = _bare_message_list(path, data)
    try:
        return parse_snapshot(data)
    except IngestError as error:
        raise IngestError(f"{path}: {error.message}") from None


def _bare_message_list(path: Path, messages: list) -> dict:
    """A plain message list becomes one complete snapshot; ids come from the messages, else from the file name."""

    def first(key: str) -> str | None:
        return next((m.get(key) for m in messages if isinstance(m, dict) and m.get(key)), None)

    return {
        "conversation_id": first("conversation_id") or path.stem,
        "run_id": first("run_id") or f"{path.stem}-import",
        "state": "complete",
        "messages": messages,
    }


def _read_jsonl(path: Path) -> list[SnapshotPayload]:
    payloads = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                payloads.append(parse_snapshot(_load_json(line, where)))
            except IngestError as error:
                message = error.message if error.message.startswith(where) else f"{where}: {error.message}"
                raise IngestError(message) from None
    return payloads


def _harness_tables(path: Path) -> set[str]:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        raise IngestError(f"{path}: unreadable SQLite database ({error}).") from None


def _read_harness_sqlite(path: Path) -> ImportBatch:
    tables = _harness_tables(path)
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
    with tempfile.TemporaryDirectory() as workdir:
        copy = Path(workdir) / "store.sqlite3"
        shutil.copyfile(path, copy)
        for suffix in ("-wal", "-shm"):
            if Path(f"{path}{suffix}").exists():
                shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
        try:
            snapshots = asyncio.run(_harness_snapshots(SqliteStepStore(database=copy)))
            effects = _harness_tool_effects(copy) if "tool_effects" in tables else []
        except (sqlite3.DatabaseError, ValueError, KeyError) as error:
            raise IngestError(f"{path}: unreadable harness database ({error}).") from None
    return ImportBatch(snapshots, effects)


async def _harness_snapshots(store) -> list[SnapshotPayload]:
    payloads = []
    for run in await store.list_runs():
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


def _harness_tool_effects(path: Path) -> list[ToolEffectPayload]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT run_id, tool_call_id, tool_name, status, started_at, ended_at FROM tool_effects"
        ).fetchall()
    return [
        ToolEffectPayload(
            run_id=run_id,
            tool_call_id=call_id,
            tool_name=name,
            status=status,
            started_at=_parse_time(started),
            ended_at=_parse_time(ended),
        )
        for run_id, call_id, name, status, started, ended in rows
    ]
