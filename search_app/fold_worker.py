"""The fold worker: a process of its own that folds search tails and rebuilds pending conversations.

Web workers never fold or rebuild in a thread of theirs (a daemon thread dies with its process, and a thread in a
web worker competes with the requests it serves). What is left to do is always in the database, so nothing is
lost when this process dies: a tenant's unfolded documents (search_app_unfoldeddocument), its tombstones, and
its conversations marked `pending` (a redaction-pattern change, a failed write). Each fold batch and each
conversation rebuild is one transaction; a crash rolls the current one back and the next start resumes there.

A tenant is claimed for a pass with a session-level `pg_try_advisory_lock` on PostgreSQL: a second worker skips
it (one fold and one rebuild per tenant at a time), and the claim ends with the holder's connection, so a killed
worker's tenants are free for the next start. SQLite has one writer at a time anyway and takes no claim.

`manage.py serve` supervises one of these (`manage.py fold_worker`); run it by hand where another server is used.
"""

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection

from search_app import bulk_load, folding, index
from search_app.models import ConversationIndex

logger = logging.getLogger(__name__)

_CLAIM_CLASS = 0x5EA4C5  # pg_try_advisory_lock(class, tenant): one worker per tenant at a time
CONVERSATIONS = ConversationIndex._meta.db_table


@dataclass(slots=True)
class Pass:
    """What one pass over the tenants with work did."""

    tenants: int = 0
    skipped: int = 0
    conversations: int = 0
    documents: int = 0


def tenants_with_work() -> list[int]:
    """Tenants with an unfolded document, a tombstone or a pending conversation."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT tenant_id FROM {folding.TAIL} UNION SELECT DISTINCT tenant_id FROM {folding.TOMBSTONES} "  # noqa: S608 - constant tables
            f"UNION SELECT DISTINCT tenant_id FROM {CONVERSATIONS} WHERE pending"
        )
        return sorted(row[0] for row in cursor.fetchall())


@contextmanager
def _claimed(tenant_id: int) -> Iterator[bool]:
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_CLAIM_CLASS, tenant_id])
        claimed = bool(cursor.fetchone()[0])
    try:
        yield claimed
    finally:
        if claimed:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_CLAIM_CLASS, tenant_id])


def run_pass() -> Pass:
    """Rebuild every pending conversation and fold every tail and tombstone, tenant by tenant."""
    done = Pass()
    for tenant_id in tenants_with_work():
        with _claimed(tenant_id) as claimed:
            if not claimed:
                done.skipped += 1
                continue
            done.tenants += 1
            # Pending conversations one transaction each, then the tenant's whole tail folded.
            conversations, documents = index.reconcile_pending([tenant_id])
            done.conversations += conversations
            done.documents += documents
            # Where autovacuum is off (or lags behind a burst), what the API wrote would keep the planner's
            # statistics of the empty tables, as an import's would without `bulk_load.settle`.
            bulk_load.analyze_changed(tenant_id)
    return done


def run(interval: float, stop: threading.Event, *, passes: int | None = None) -> None:
    """Pass after pass, `interval` seconds apart while there is nothing to do, until `stop` is set (or the
    process that started this one is gone: an orphaned worker would fold for a server that no longer runs)."""
    parent = os.getppid()
    done = 0
    while passes is None or done < passes:
        done += 1
        try:
            result = run_pass()
        except Exception:  # the work stays in the database; log, reconnect and try again next pass
            logger.exception("A fold worker pass failed; retrying")
            connection.close()
            result = Pass()
        if stop.is_set() or os.getppid() != parent or (passes is not None and done >= passes):
            return
        if not (result.tenants or result.skipped) and stop.wait(interval):
            return
