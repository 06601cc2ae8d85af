"""Gate 2, authority: history a client handed over is untrusted. Pure."""

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage

from sessions_app.audit.gates.context import AUTHORITY, CLIENT, AuditContext, Finding
from sessions_app.audit.vocabulary import Verdict


def check_authority(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 2: history a client handed over is untrusted, however well-formed."""
    if CLIENT not in ctx.sources:
        return []
    return [
        Finding(
            gate=AUTHORITY,
            code=Verdict.UNTRUSTED_HISTORY,
            key="untrusted",
            detail=(
                "This run's history was supplied by a client (a client API key, or a server marking it "
                "client-supplied), not loaded from an authorized server-side source."
            ),
        )
    ]
