"""A conversation's run timeline read from the store: four bounded queries, then the pure core.

Runs, the transcript's message facts (position, run, and `TranscriptEntry.facts`: the message's JSON without
content, kept when the row was written), the conversation's tool-effect ledger and its calls' approval reviews
and judgements (OTLP's runtime spans); the timeline itself is built by sessions_app.transcripts.run_timeline. No
message body is read or parsed.
"""

from collections.abc import Sequence

from django.db.models import TextField
from django.db.models.functions import Cast
from pydantic_core import from_json

from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.models import Conversation, Run, ToolEffect, TranscriptEntry
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.run_timeline import (
    ConversationTimeline,
    EffectFacts,
    InterruptedCall,
    RunFacts,
    build_timeline,
)
from sessions_app.transcripts.runtime_spans import reviews_by_call


def read_timeline(
    conversation: Conversation, interrupted: Sequence[tuple[str, str, str, str]] = ()
) -> ConversationTimeline:
    """The conversation's timeline; plain rows only (no model instances: 200 runs as objects cost more than the
    layout). `interrupted`: the calls only an interrupted snapshot holds, as (run id, tool name, hashed tool-call
    id, in-place anchor); each is listed under its run with the ledger's times when the harness wrote them."""
    tenant = conversation.tenant
    facts = [
        RunFacts(*row)
        for row in scoped(Run, tenant)
        .filter(conversation=conversation)
        .order_by("started_at", "pk")
        .values_list("pk", "run_id", "parent_run_id", "agent_name", "state", "started_at", "finished_at")
    ]
    rows = (
        scoped(TranscriptEntry, tenant)
        .filter(conversation=conversation, summary_artifact=False)
        .order_by("position")
        .annotate(facts_text=Cast("facts", TextField()))
        .values_list("position", "run_id", "facts_text")
    )
    # The facts as text, parsed by pydantic-core's JSON parser: Django's JSONField would decode each row with the
    # json module, which costs more than the query for a long transcript.
    run_ids = {r.pk: r.run_id for r in facts}
    messages = ((position, run_ids.get(run_pk, ""), from_json(text)) for position, run_pk, text in rows)
    effects = {
        row[0]: EffectFacts(*row)
        for row in scoped(ToolEffect, tenant)
        .filter(run__in=list(run_ids))  # the runs' pks, not a join: a join would read every tenant's partition
        .order_by("pk")
        .values_list("tool_call_id", "tool_name", "status", "started_at", "ended_at")
    }
    by_hash = {hash_tool_call_id(call_id): effect for call_id, effect in effects.items()} if interrupted else {}
    calls = [
        InterruptedCall(run_id, tool_name, anchor, by_hash.get(call_hash))
        for run_id, tool_name, call_hash, anchor in interrupted
    ]
    return build_timeline(facts, messages, effects, reviews_by_call(conversation), calls)
