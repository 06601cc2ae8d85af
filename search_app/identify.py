"""Identification: the conversations, runs and tool calls whose id is exactly the query, found before ranking."""

from collections.abc import Sequence

from django.db import connection

from search_app.backends.base import SqlParams, json_member
from search_app.results import Identified
from sessions_app.models import Conversation, Run, Tenant, ToolEffect, TranscriptEntry

MAX_IDENTIFIED = 10
CONVERSATIONS = Conversation._meta.db_table
RUNS = Run._meta.db_table
EFFECTS = ToolEffect._meta.db_table
MAX_ID_CHARS = 400


def identify(
    query: str, tenants: Sequence[Tenant], conversation_pk: int | None = None, run_pk: int | None = None
) -> list[Identified]:
    """The conversations, runs and tool-call messages whose id is exactly `query` (stripped), within the scope.

    A tool call is found through the harness's tool-effect ledger (an index on tenant and call id), then its call
    and result messages in the runs it names by the id as it stands in their JSON, matched whole. Reading every
    message's JSON instead would cost a scan of the scope on every search; a call the ledger never recorded is
    found by the words of its arguments and result, not by its id.
    """
    candidate = id_candidate(query)
    if candidate is None:
        return []
    sql, params = named_statement(candidate, tuple(t.id for t in tenants), conversation_pk, run_pk)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = [(str(kind), int(tenant), str(ext), str(run), int(key)) for kind, tenant, ext, run, key in cursor]
    return identified(candidate, rows, tenants)


def id_candidate(query: str) -> str | None:
    """What an id in `query` would be: the query stripped; None when it cannot be one (empty, too long)."""
    candidate = query.strip()
    return candidate if candidate and len(candidate) <= MAX_ID_CHARS else None


def identified(
    candidate: str, rows: Sequence[tuple[str, int, str, str, int]], tenants: Sequence[Tenant]
) -> list[Identified]:
    """What `named_statement`'s rows (in any order) name: conversations and runs, then the tool-call messages of
    the ledger's runs (one more statement, only when the ledger knows the id)."""
    slugs = {t.id: t.slug for t in tenants}
    found: list[Identified] = []
    run_pks: list[int] = []
    for kind, tenant_id, external_id, run, key in sorted(rows, key=lambda row: (_KINDS.index(row[0]), row[4])):
        if kind == "ledger":
            run_pks.append(key)
        else:
            found.append(Identified(kind, slugs[tenant_id], external_id, run if kind == "run" else ""))
    if not run_pks:
        return found
    entries = TranscriptEntry.objects.filter(tenant_id__in=slugs, run_id__in=run_pks, summary_artifact=False)
    calls = entries.filter(message__tenant_id__in=slugs, message__data__contains=json_member("tool_call_id", candidate))
    for tenant_id, external_id, run, position, role in calls.order_by("conversation_id", "position").values_list(
        "tenant_id", "conversation__external_id", "run__run_id", "position", "role"
    )[:MAX_IDENTIFIED]:
        found.append(Identified("tool_call", slugs[tenant_id], external_id, run, position, role))
    return found


_KINDS = ("conversation", "run", "ledger")


def named_statement(
    candidate: str,
    tenant_ids: tuple[int, ...],
    conversation_pk: int | None,
    run_pk: int | None,
    conversation_sql: tuple[str, SqlParams] | None = None,
) -> tuple[str, SqlParams]:
    """The statement whose rows are (kind, tenant, conversation id, run id, key) of the conversations (3), runs (3)
    and ledger entries (their runs' keys, 10) whose id is `candidate`, within the scope, each part by its own
    index; a caller may run it as part of a larger statement (search_app.facts, ranking.scoped_blocks), and name
    the conversation by an SQL expression of its key (`conversation_sql`) instead of the key."""
    marks = ", ".join(["%s"] * len(tenant_ids))
    parts: list[str] = []
    params: SqlParams = []
    conversation: tuple[str, SqlParams] | None = conversation_sql
    if conversation_pk is not None:
        conversation = ("%s", [conversation_pk])
    if run_pk is None:
        narrow = "" if conversation is None else f" AND c.id = {conversation[0]}"
        parts.append(
            f"SELECT 'conversation' AS kind, c.tenant_id, c.external_id, '' AS run, c.id AS k FROM {CONVERSATIONS} c "  # noqa: S608 - constant tables, bound values
            f"WHERE c.tenant_id IN ({marks}) AND c.external_id = %s{narrow} ORDER BY c.id LIMIT 3"
        )
        params += [*tenant_ids, candidate, *([] if conversation is None else conversation[1])]
    run_narrow, run_params = "", SqlParams()
    if conversation is not None:
        run_narrow, run_params = f" AND r.conversation_id = {conversation[0]}", [*conversation[1]]
    if run_pk is not None:
        run_narrow, run_params = run_narrow + " AND r.id = %s", [*run_params, run_pk]
    parts.append(
        f"SELECT 'run', r.tenant_id, c.external_id, r.run_id, r.id FROM {RUNS} r JOIN {CONVERSATIONS} c "  # noqa: S608 - constant tables, bound values
        f"ON c.tenant_id = r.tenant_id AND c.id = r.conversation_id WHERE r.tenant_id IN ({marks}) "
        f"AND c.tenant_id IN ({marks}) AND r.run_id = %s{run_narrow} ORDER BY r.id LIMIT 3"
    )
    params += [*tenant_ids, *tenant_ids, candidate, *run_params]
    if run_pk is not None:
        ledger_from, ledger_narrow, ledger_params = f"{EFFECTS} e", " AND e.run_id = %s", SqlParams([run_pk])
    elif conversation is not None:
        ledger_from = f"{EFFECTS} e JOIN {RUNS} r ON r.tenant_id = e.tenant_id AND r.id = e.run_id"
        ledger_narrow, ledger_params = f" AND r.conversation_id = {conversation[0]}", [*conversation[1]]
    else:
        ledger_from, ledger_narrow, ledger_params = f"{EFFECTS} e", "", []
    parts.append(
        f"SELECT 'ledger', e.tenant_id, '', '', e.run_id FROM {ledger_from} "  # noqa: S608 - constant tables, bound values
        f"WHERE e.tenant_id IN ({marks}) AND e.tool_call_id = %s{ledger_narrow} LIMIT {MAX_IDENTIFIED}"
    )
    params += [*tenant_ids, candidate, *ledger_params]
    # Each part in a subquery of its own: SQLite takes ORDER BY and LIMIT only there in a compound statement.
    sql = " UNION ALL ".join(f"SELECT * FROM ({part}) AS p{number}" for number, part in enumerate(parts))  # noqa: S608 - constant tables, bound values
    return sql, params
