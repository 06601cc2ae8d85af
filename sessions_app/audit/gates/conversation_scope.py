"""Gate 5, conversation scope: every message belongs to the run's conversation and principal. Pure."""

from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from pydantic_ai.messages import ModelMessage

from sessions_app.audit.digests import sha256_hex
from sessions_app.audit.gates.context import CONVERSATION_SCOPE, AuditContext, Finding
from sessions_app.audit.vocabulary import Verdict


def _scope(key: str, detail: str, conversation_id: str = "") -> Finding:
    return Finding(
        gate=CONVERSATION_SCOPE,
        code=Verdict.SCOPE_DRIFT,
        key=f"scope:{key}",
        detail=detail,
        conversation_id=conversation_id,
    )


def scope_ids(messages: Sequence[ModelMessage]) -> tuple[Counter[str], set[str]]:
    """What gate 5 reads from a history: how many messages carry each conversation id, and the run ids."""
    return Counter(m.conversation_id for m in messages if m.conversation_id), {m.run_id for m in messages if m.run_id}


def check_conversation_scope(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 5: every message belongs to the run's conversation, in this tenant, and ids are not confused."""
    return scope_findings(*scope_ids(messages), ctx)


def scope_findings(ids: Mapping[str, int], message_run_ids: AbstractSet[str], ctx: AuditContext) -> list[Finding]:
    """Gate 5 from the history's conversation ids (with their message counts) and run ids."""
    findings: list[Finding] = []
    stray = sorted(set(ids) - {ctx.conversation_id} - ctx.merged_conversation_ids)
    if stray:
        listed = ", ".join(f"'{cid}' ({ids[cid]} message(s))" for cid in stray)
        findings.append(
            _scope(
                "mixed:" + sha256_hex("\n".join(stray))[:16],
                f"The run belongs to conversation '{ctx.conversation_id}', but its history also carries "
                f"{listed}, with no recorded merge.",
            )
        )
    for cid in stray:
        if cid not in ctx.owned_conversation_ids:
            findings.append(
                _scope(
                    "foreign:" + sha256_hex(cid)[:16],
                    f"Conversation '{cid}' in this history is not a conversation of this tenant.",
                    conversation_id=cid,
                )
            )
    for cid in sorted(set(ids) | {ctx.conversation_id}):
        if cid == ctx.run_id or cid in message_run_ids or cid in ctx.tenant_run_ids:
            findings.append(
                _scope(
                    "run_id_as_conversation:" + sha256_hex(cid)[:16],
                    f"The run id '{cid}' is used as a conversation key.",
                    conversation_id=cid,
                )
            )
    if ctx.parent_run_id and ctx.parent_conversation_id == ctx.conversation_id:
        findings.append(
            _scope(
                "fork:" + sha256_hex(ctx.parent_run_id)[:16],
                f"This run branched from run '{ctx.parent_run_id}' but kept its conversation id "
                f"'{ctx.conversation_id}'; a fork needs its own.",
                conversation_id=ctx.conversation_id,
            )
        )
    findings.extend(_principal_drift(ctx))
    return findings


def short_principal(principal_hash: str) -> str:
    """How a principal is shown: the first 12 hex digits of its keyed hash, or 'none'."""
    return f"{principal_hash[:12]}…" if principal_hash else "none"


def _principal_drift(ctx: AuditContext) -> list[Finding]:
    """The conversation belongs to its first principal: a run written for another one, or a replay asked for
    another one (or for none), is history moving from one authorization to another."""
    owner = ctx.owner_principal_hash
    if not owner:
        return []
    findings = [
        _scope(
            "principal:" + other[:16],
            f"This run was written for principal {short_principal(other)}, but conversation "
            f"'{ctx.conversation_id}' belongs to principal {short_principal(owner)}.",
            conversation_id=ctx.conversation_id,
        )
        for other in sorted(ctx.run_principal_hashes - {owner, ""})
    ]
    requested = ctx.replay_principal_hash
    if requested is not None and requested != owner:
        asked = f"principal {short_principal(requested)}" if requested else "no principal"
        findings.append(
            _scope(
                "replay_principal:" + (requested[:16] or "none"),
                f"Replay was asked for {asked}, but conversation '{ctx.conversation_id}' belongs to "
                f"principal {short_principal(owner)}.",
                conversation_id=ctx.conversation_id,
            )
        )
    return findings
