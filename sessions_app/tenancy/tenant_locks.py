"""Per-tenant transaction locks: PostgreSQL advisory locks keyed by (class, tenant id), held until the transaction
ends, in place of row locks on the tenant's rows of the shared tables (`sessions_app_tenant`, `_membership`,
`_invitation`).

On Citus those tables are reference tables, and Citus guards a row lock on one with a lock on the table's only
shard, for every tenant at once (Citus 13.2.2, `AcquireExecutorShardLocksForExecution`): `FOR UPDATE` takes it
exclusively until commit, so one tenant's settings change stalled every other tenant's lockers, and `FOR SHARE`
takes a ShareLock and then a RowExclusiveLock, so two concurrent `FOR SHARE`s (two ingests) deadlocked inside that
one statement. An advisory lock is taken where the statement runs, on the coordinator every connection talks to,
names one tenant, and waits only for that tenant's holders. (Advisory locks are per node: this relies on every
application connection going to the coordinator; a deployment sending queries to the workers too would split
them.)

SQLite takes nothing: it has one writer at a time."""

from collections.abc import Iterable
from enum import IntEnum

from django.db import connection


class TenantLock(IntEnum):
    """The advisory lock classes (the first key; the tenant id is the second). search_app.folding and
    search_app.fold_worker use 0x5EA4C4 and 0x5EA4C5."""

    REDACTION = 0x5EA4C6
    """Index writers hold it shared while they mask with the tenant's patterns; a pattern change exclusively."""
    SETTINGS = 0x5EA4C7
    """The tenant's prices and STUCK threshold: a change, and a reprice that reads the prices, one at a time."""
    MEMBERS = 0x5EA4C8
    """The tenant's memberships and invitations: role changes, removals, acceptances and withdrawals one at a time."""


# unnest keeps the array's (sorted) order: one statement, the locks taken one after another.
_SHARED = "SELECT pg_advisory_xact_lock_shared(%s, tenant_id) FROM unnest(%s::integer[]) AS tenant_id"
_EXCLUSIVE = "SELECT pg_advisory_xact_lock(%s, tenant_id) FROM unnest(%s::integer[]) AS tenant_id"


def lock_tenants(lock: TenantLock, tenant_ids: Iterable[int], *, shared: bool = False) -> None:
    """Take `lock` on each tenant until the current transaction ends, waiting for conflicting holders. Call it
    inside the transaction whose reads and writes it guards: in autocommit it is released with its own statement.

    Statements after this one see what the holders it waited for committed (READ COMMITTED takes a new snapshot
    per statement), so read what the lock guards after taking it. The ids are taken in ascending order, so two
    transactions locking several tenants cannot deadlock on these locks."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(_SHARED if shared else _EXCLUSIVE, [int(lock), sorted(set(tenant_ids))])
