"""Migration 0025 fills each stored snapshot's `message_ids` from its reference rows, in position order, and 0026
keeps them as comma-separated text (SQLite's statements here on a store of their own; PostgreSQL's run in
test_partition_migration on a migrated store)."""

import importlib
import json
import sqlite3

fill = importlib.import_module("sessions_app.migrations.0025_snapshot_message_ids")


def test_sqlite_fills_each_snapshots_ids_in_position_order_and_leaves_one_without_rows_empty():
    db = sqlite3.connect(":memory:")
    db.executescript(
        """
        CREATE TABLE sessions_app_snapshot (id INTEGER PRIMARY KEY, message_ids TEXT NOT NULL DEFAULT '[]');
        CREATE TABLE sessions_app_snapshotmessage (id INTEGER PRIMARY KEY, snapshot_id INT, position INT,
            message_id INT);
        INSERT INTO sessions_app_snapshot (id) VALUES (1), (2), (3);
        INSERT INTO sessions_app_snapshotmessage (snapshot_id, position, message_id) VALUES
            (1, 2, 30), (1, 0, 10), (2, 0, 7), (1, 1, 20), (2, 1, 7);
        """
    )
    db.execute(fill.SQLITE)
    rows = db.execute("SELECT id, message_ids FROM sessions_app_snapshot ORDER BY id").fetchall()
    assert [(pk, json.loads(ids)) for pk, ids in rows] == [(1, [10, 20, 30]), (2, [7, 7]), (3, [])]


text = importlib.import_module("sessions_app.migrations.0026_snapshot_message_ids_text")


def test_sqlite_rewrites_each_history_as_comma_separated_ids_and_back():
    db = sqlite3.connect(":memory:")
    db.executescript(
        """
        CREATE TABLE sessions_app_snapshot (id INTEGER PRIMARY KEY, message_ids TEXT NOT NULL);
        INSERT INTO sessions_app_snapshot VALUES (1, '[10, 20, 30]'), (2, '[7,7]'), (3, '[]');
        """
    )
    db.execute(text.SQLITE)
    rows = db.execute("SELECT id, message_ids FROM sessions_app_snapshot ORDER BY id").fetchall()
    assert rows == [(1, "10,20,30"), (2, "7,7"), (3, "")]
    db.execute(text.SQLITE_BACK)
    rows = db.execute("SELECT id, message_ids FROM sessions_app_snapshot ORDER BY id").fetchall()
    assert [(pk, json.loads(ids)) for pk, ids in rows] == [(1, [10, 20, 30]), (2, [7, 7]), (3, [])]
