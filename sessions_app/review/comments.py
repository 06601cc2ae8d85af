"""Comments: written, edited (the earlier text kept) and deleted here, each with a content-minimal audit event;
`@username` of a member of the same tenant becomes a mention in their inbox. Comment text is read by members
only: nothing in search_app, the API or exports reads these rows."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from input_errors import RejectedInput
from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Comment, CommentRevision, Conversation, Membership, Mention, Role, Tenant
from sessions_app.review.comment_markup import MAX_COMMENT_LENGTH, mentioned_usernames, render_comment
from sessions_app.review.scores import check_target
from sessions_app.review.targets import Target, parse_target_key
from sessions_app.tenancy.scoping import scoped

MAX_SEARCH_RESULTS = 50


def _clean(body: str) -> str:
    body = body.strip()
    if not body:
        raise RejectedInput("A comment needs some text.")
    if len(body) > MAX_COMMENT_LENGTH:
        raise RejectedInput(f"A comment is at most {MAX_COMMENT_LENGTH} characters.")
    if "\x00" in body:
        raise RejectedInput("A comment cannot hold a NUL character.")
    return body


def _mention(tenant: Tenant, comment: Comment, author: User) -> None:
    names = mentioned_usernames(comment.body)
    if not names:
        return
    # Only members of this tenant: a name outside it is plain text, and nothing tells the author who exists.
    members = Membership.objects.filter(tenant=tenant, user__username__in=names).exclude(user=author)
    Mention.objects.bulk_create(
        [Mention(tenant=tenant, comment=comment, user_id=m.user_id) for m in members], ignore_conflicts=True
    )


def _record(tenant: Tenant, event_class: EventClass, comment: Comment, user: User) -> None:
    """Who, what and where: never the comment's text."""
    record_event(
        tenant,
        event_class,
        actor=user.get_username(),
        conversation_id=comment.conversation.external_id,
        run_id=parse_target_key(comment.target).run_id,
    )


def add_comment(tenant: Tenant, conversation: Conversation, target: Target, body: str, *, author: User) -> Comment:
    body = _clean(body)
    check_target(tenant, conversation, target)
    with transaction.atomic():
        comment = Comment.objects.create(
            tenant=tenant, conversation=conversation, target=target.key, author=author, body=body
        )
        _mention(tenant, comment, author)
        _record(tenant, EventClass.COMMENT_ADDED, comment, author)
    return comment


def edit_comment(tenant: Tenant, comment: Comment, body: str, *, editor: User) -> Comment:
    """Only its author edits a comment; the text it replaces is kept as a revision."""
    if comment.author_id != editor.pk:
        raise RejectedInput("Only a comment's author edits it.", status=403)
    body = _clean(body)
    with transaction.atomic():
        CommentRevision.objects.create(tenant=tenant, comment=comment, body=comment.body)
        comment.body, comment.edited_at = body, timezone.now()
        scoped(Comment, tenant).filter(pk=comment.pk).update(body=body, edited_at=comment.edited_at)
        _mention(tenant, comment, editor)
        _record(tenant, EventClass.COMMENT_EDITED, comment, editor)
    return comment


def delete_comment(tenant: Tenant, comment: Comment, *, actor: User, actor_role: str) -> None:
    if comment.author_id != actor.pk and actor_role != Role.ADMIN:
        raise RejectedInput("Only a comment's author or an admin deletes it.", status=403)
    with transaction.atomic():
        _record(tenant, EventClass.COMMENT_DELETED, comment, actor)
        comment.delete()


@dataclass(frozen=True)
class ShownComment:
    comment: Comment
    html: SafeString
    target_label: str
    revisions: int


def comments_on(tenant: Tenant, conversation: Conversation) -> list[ShownComment]:
    rows = (
        scoped(Comment, tenant).filter(conversation=conversation).select_related("author").order_by("created_at", "pk")
    )
    revision_counts: dict[int, int] = {}
    # The tenant named on the joined table too: one partition (one Citus shard) per table read.
    revisions = scoped(CommentRevision, tenant).filter(comment__conversation=conversation, comment__tenant=tenant)
    for comment_id in revisions.values_list("comment_id", flat=True):
        revision_counts[comment_id] = revision_counts.get(comment_id, 0) + 1
    return [
        ShownComment(
            c,
            # markdown-it with raw HTML off escapes every tag in the text (comment_markup): nothing here is raw.
            mark_safe(render_comment(c.body)),  # noqa: S308
            parse_target_key(c.target).label,
            revision_counts.get(c.pk, 0),
        )
        for c in rows
    ]


def comment_for(tenant: Tenant, pk: int) -> Comment:
    """The tenant's comment with its conversation, else 404 as for one that does not exist."""
    comment = scoped(Comment, tenant).filter(pk=pk, conversation__tenant=tenant).select_related("conversation").first()
    if comment is None:
        raise Http404("No such comment.")
    return comment


def inbox(tenant: Tenant, user: User) -> QuerySet[Mention]:
    return (
        scoped(Mention, tenant)
        .filter(user=user, comment__tenant=tenant, comment__conversation__tenant=tenant)
        .select_related("comment", "comment__author", "comment__conversation")
        .order_by("-created_at", "-pk")
    )


def mark_read(tenant: Tenant, user: User) -> int:
    return scoped(Mention, tenant).filter(user=user, read_at=None).update(read_at=timezone.now())


def search_comments(tenant: Tenant, query: str) -> list[Comment]:
    """Comments of the tenant holding `query` (case-insensitive), newest first: the members' own path, apart from
    the transcript index agents and keys search."""
    query = query.strip()
    if not query:
        return []
    return list(
        scoped(Comment, tenant)
        .filter(body__icontains=query, conversation__tenant=tenant)
        .select_related("author", "conversation")
        .order_by("-created_at", "-pk")[:MAX_SEARCH_RESULTS]
    )
