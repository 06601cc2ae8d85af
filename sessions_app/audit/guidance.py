"""What a person should do next about each kind of finding (SPEC section 3). Pure text, no content.

A repair that makes a provider accept a history proves nothing about the world outside it, so the guidance
never says "retry": it says how to find out first.
"""

from sessions_app.audit import verdict as v

GUIDANCE: dict[str, str] = {
    v.UNTRUSTED_HISTORY: (
        "Do not replay this copy. It came from a client, and a client can forge tool calls, tool results, "
        "system prompts and approvals however well-formed they look. Re-load the conversation from the "
        "server-side source (the server's own step snapshots) and resume from that."
    ),
    v.SCOPE_DRIFT: (
        "Quarantine this history: do not resume it until its scope is reconciled. Split messages back into "
        "their own conversations, or record an explicit merge if they truly belong together; give a fork "
        "its own conversation id; never use a run id as a conversation key."
    ),
    v.ROUND_TRIP_MISMATCH: (
        "The stored history does not survive pydantic-ai's ModelMessagesTypeAdapter unchanged, so a replay "
        "would send something other than what was stored. Re-ingest it from the original source, or inspect"
        " the named field before resuming."
    ),
    v.SYSTEM_PROMPT_GAP: (
        "Resuming from non-empty history, pydantic-ai assumes the system prompt is already in it, so this "
        "run would continue without the agent's prompt. Restore the prompt (for example with the "
        "ReinjectSystemPrompt capability) or, if the agent's prompt changed on purpose, register its new "
        "prompt contract."
    ),
    v.INTERRUPTED_TOOL: (
        "An interrupted call is a signal, not a retry order. Query the destination for the effect first, "
        "using the call's idempotency key; retry only once a fresh read proves the effect absent, with that"
        " same idempotency key, and record an outcome receipt. This history still carries the unsettled "
        "call, so continue from one where it is answered with what you read, not by replaying this one."
    ),
    v.ORPHAN_RESULT_REMOVED: (
        "A tool result whose call is missing will be dropped before the next request. Keep this audit "
        "record, and find where the call went (context eviction, a hand-built or client-edited history) "
        "before relying on what the result said."
    ),
    v.WAITING: (
        "The run is legitimately waiting for a person's decision. The owner named in the wait record "
        "decides before the deadline and the run resumes with the resume token; nothing to replay "
        "meanwhile."
    ),
    v.STUCK: (
        "The waiting window closed with neither an outcome nor a new wait. Escalate to the wait's owner, "
        "read the destination to see whether the effect exists, then record an outcome receipt or a new "
        "wait."
    ),
    v.MISSING_OUTCOME_RECEIPT: (
        "No proof that the intended effect exists. Read the destination afresh and record an outcome "
        "receipt (evidence 'outcome'); a model saying 'done' is only activity evidence and a tool saying "
        "'accepted' only transport evidence. If the run awaits a human decision, record a wait instead."
    ),
}


def guidance_for(code: str) -> str:
    return GUIDANCE[code]
