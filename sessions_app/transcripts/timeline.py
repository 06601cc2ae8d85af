"""A conversation's run timeline read from the store: three bounded queries, then the pure core.

Runs, the transcript's message facts (position, run, and `TranscriptEntry.facts`: the message's JSON without
content, kept when the row was written) and the conversation's tool-effect ledger; the timeline itself is built
by sessions_app.core.timeline. No message body is read or parsed.
"""

from sessions_app.core.timeline import ConversationTimeline, EffectFacts, RunFacts, build_timeline
from sessions_app.models import Conversation, Run, ToolEffect, TranscriptEntry
from sessions_app.tenancy.scoping import scoped


def read_timeline(conversation: Conversation, runs: list[Run]) -> ConversationTimeline:
    tenant = conversation.tenant
    facts = [
        RunFacts(
            pk=r.pk,
            run_id=r.run_id,
            parent_run_id=r.parent_run_id,
            agent_name=r.agent_name,
            state=r.state,
            started_at=r.started_at,
            finished_at=r.finished_at,
        )
        for r in runs
    ]
    rows = (
        scoped(TranscriptEntry, tenant)
        .filter(conversation=conversation, summary_artifact=False)
        .order_by("position")
        .values_list("position", "run__run_id", "facts")
    )
    messages = rows.iterator(chunk_size=2000)
    effects = {
        e.tool_call_id: EffectFacts(e.tool_call_id, e.tool_name, e.status, e.started_at, e.ended_at)
        for e in scoped(ToolEffect, tenant).filter(run__conversation=conversation).order_by("pk")
    }
    return build_timeline(facts, messages, effects)
