"""Which tables Citus distributes by tenant, which it copies to every node, and which stay on the coordinator.

Pure: it takes table names and foreign keys and returns the layout `distribute_tenants` applies
(docs/SCALING.md, "Citus"). A table is tenant-owned when it has a `tenant_id` column, except SHARED_TENANT_TABLES:
API keys and invitations are found by a secret's hash, and memberships by the signed-in user, before the tenant is
known, so they are shared by every node. A table sharing a foreign key with a shared one (the tenants, Django's
users, their groups and permissions, the admin log) is shared too: Citus lets a distributed table refer only to
a reference table or one of its own colocation group, and it would turn a plain table referring to a reference
table into a coordinator-local Citus table, which no identity column survives. Everything else (sessions,
migrations, login lockouts) stays an ordinary table of the coordinator.
"""

from collections.abc import Iterable
from dataclasses import dataclass

TENANT_TABLE = "sessions_app_tenant"
SHARED_TENANT_TABLES = frozenset({"sessions_app_apikey", "sessions_app_invitation", "sessions_app_membership"})


@dataclass(frozen=True)
class CitusLayout:
    reference: tuple[str, ...]
    distributed: tuple[str, ...]
    local: tuple[str, ...]

    @property
    def colocation_anchor(self) -> str:
        """The distributed table every other one is colocated with: its shards decide where a tenant lives."""
        return self.distributed[0]


def plan_layout(
    tables: Iterable[str], tenant_owned: Iterable[str], foreign_keys: Iterable[tuple[str, str]]
) -> CitusLayout:
    """Each table's place, from every table, the ones with a `tenant_id` and the (table, referenced) pairs."""
    all_tables = set(tables)
    distributed = {t for t in tenant_owned if t in all_tables} - SHARED_TENANT_TABLES - {TENANT_TABLE}
    shared = ({TENANT_TABLE} | SHARED_TENANT_TABLES) & all_tables
    neighbours: dict[str, set[str]] = {}
    for table, referenced in foreign_keys:
        neighbours.setdefault(table, set()).add(referenced)
        neighbours.setdefault(referenced, set()).add(table)
    # A table a shared or distributed one refers to, or that refers to one, and is not tenant-owned, is shared.
    frontier = list(shared | distributed)
    while frontier:
        for other in neighbours.get(frontier.pop(), set()) & all_tables - shared - distributed:
            shared.add(other)
            frontier.append(other)
    return CitusLayout(
        reference=tuple(sorted(shared)),
        distributed=tuple(sorted(distributed)),
        local=tuple(sorted(all_tables - shared - distributed)),
    )
