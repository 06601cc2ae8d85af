"""A conversation's scores and comments as one JSON document: exported only when asked for, beside (never inside)
the transcript export, so a transcript export never carries comment text."""

from typing import Any

from sessions_app.models import Comment, Conversation, Score, Tenant
from sessions_app.tenancy.scoping import scoped


def review_document(tenant: Tenant, conversation: Conversation) -> dict[str, Any]:
    score_rows = (
        scoped(Score, tenant)
        .filter(conversation=conversation, definition__tenant=tenant)
        .select_related("definition")
        .order_by("pk")
    )
    comment_rows = scoped(Comment, tenant).filter(conversation=conversation).select_related("author").order_by("pk")
    return {
        "conversation_id": conversation.external_id,
        "scores": [
            {
                "name": s.definition.name,
                "kind": s.definition.kind,
                "target": s.target,
                "number": s.number,
                "text": s.text,
                "author": s.author,
                "updated_at": s.updated_at.isoformat(),
            }
            for s in score_rows
        ],
        "comments": [
            {
                "target": c.target,
                "author": c.author.get_username() if c.author else None,
                "body": c.body,
                "created_at": c.created_at.isoformat(),
                "edited_at": c.edited_at.isoformat() if c.edited_at else None,
            }
            for c in comment_rows
        ],
    }
