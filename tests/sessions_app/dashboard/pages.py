"""Every dashboard URL with the lowest role allowed to use it, for the role and cross-tenant matrices."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.test import Client

from sessions_app.audit.evidence import add_wait
from sessions_app.dashboard.filter_urls import conversations_for
from sessions_app.dashboard.ids import quote_id
from sessions_app.models import Conversation, Membership, ReviewPolicy, Run, SavedView, Snapshot, Tenant
from sessions_app.review import comments, queues, scores, share_links
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from sessions_app.tenancy.administration import create_invitation
from sessions_app.tenancy.api_keys import create_api_key

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse

MATRIX_TOKEN = "matrix-resume-token-0123456789"


@dataclass(frozen=True)
class Page:
    name: str
    url: str
    method: str  # GET or POST
    role: str  # the lowest role allowed
    data: tuple[tuple[str, str], ...] = ()


def tenant_pages(tenant: Tenant, conversation: Conversation) -> list[Page]:
    """The tenant's pages, object URLs pointing at `conversation` (and its first run, snapshot, member, key)."""
    run = Run.objects.filter(tenant=tenant, conversation=conversation).order_by("started_at", "pk").first()
    snapshot = Snapshot.objects.filter(tenant=tenant, run=run).order_by("seq").first()
    member = Membership.objects.filter(tenant=tenant).order_by("pk").first()
    assert run is not None and snapshot is not None and member is not None
    key, _ = create_api_key(tenant, "server", "matrix")
    invitation, _ = create_invitation(tenant, "support", "matrix", actor=member.user)
    add_wait(
        tenant,
        {
            "run_id": run.run_id,
            "owner": "o",
            "decision": "d",
            "deadline": "2999-01-01T10:00:00+00:00",
            "resume_token": MATRIX_TOKEN,
        },
    )
    review = _review_objects(tenant, conversation, member)
    view = SavedView.objects.filter(tenant=tenant, name="matrix").first() or SavedView.objects.create(
        tenant=tenant, name="matrix", query="state=complete", created_by=member.user
    )
    c, r = quote_id(conversation.external_id), quote_id(run.run_id)
    return [
        Page("conversation list", "/conversations/", "GET", "support"),
        Page("conversation", f"/c/{c}/", "GET", "support"),
        Page("transcript window", f"/c/{c}/?start=0", "GET", "support"),
        Page("search", "/search/?q=flag", "GET", "support"),
        Page("overview", "/overview/", "GET", "support"),
        Page("timeline", f"/c/{c}/timeline", "GET", "support"),
        Page("run", f"/r/{r}/", "GET", "support"),
        Page("legacy conversation url", f"/conversations/{conversation.pk}/", "GET", "support"),
        Page("legacy run url", f"/runs/{run.pk}/", "GET", "support"),
        Page("snapshots", f"/r/{r}/snapshots/", "GET", "operator"),
        Page("snapshot diff", f"/r/{r}/snapshots/{snapshot.seq}/diff", "GET", "operator"),
        Page("receipts", f"/r/{r}/receipts/", "GET", "operator"),
        Page(
            "add receipt",
            f"/r/{r}/receipts/add",
            "POST",
            "operator",
            (("effect", "x"), ("evidence", "outcome"), ("checked_by", "matrix")),
        ),
        Page(
            "add wait",
            f"/r/{r}/waits/add",
            "POST",
            "operator",
            (("owner", "o"), ("decision", "d"), ("deadline", "2999-01-01T10:00")),
        ),
        Page("resolve wait", f"/r/{r}/waits/resolve", "POST", "operator", (("resume_token", MATRIX_TOKEN),)),
        Page("add merge", f"/r/{r}/merges/add", "POST", "operator", (("merged_conversation_id", "matrix-merged"),)),
        Page("run audit", f"/r/{r}/audit", "GET", "operator"),
        Page("re-audit", f"/c/{c}/reaudit", "POST", "operator"),
        Page("re-index", f"/c/{c}/reindex", "POST", "operator"),
        Page("repairs", "/repairs/", "GET", "operator"),
        Page("audit events", "/audit/", "GET", "operator"),
        Page("audit csv", "/audit.csv", "GET", "operator"),
        Page("export page", "/export/", "GET", "admin"),
        Page("export download", "/export/download?format=jsonl", "GET", "admin"),
        Page("export conversation", f"/c/{c}/export?format=json", "GET", "admin"),
        Page("reveal", f"/c/{c}/reveal/2", "POST", "admin"),
        Page("members", "/settings/members/", "GET", "admin"),
        Page("withdraw invitation", f"/settings/invitations/{invitation.pk}/withdraw", "POST", "admin"),
        Page("member role", f"/settings/members/{member.pk}/role", "POST", "admin", (("role", "admin"),)),
        Page("member remove", f"/settings/members/{member.pk}/remove", "POST", "admin"),
        Page("api keys", "/settings/api-keys/", "GET", "admin"),
        Page("api key revoke", f"/settings/api-keys/{key.pk}/revoke", "POST", "admin"),
        Page("redaction", "/settings/redaction/", "GET", "admin"),
        Page("retention", "/settings/retention/", "GET", "admin"),
        Page("costs", "/settings/costs/", "GET", "admin"),
        Page("save costs", "/settings/costs/", "POST", "admin", (("stuck_after_hours", "12"), ("prices", "m 1 2"))),
        # Review (issue 27).
        Page("set score", f"/c/{c}/score", "POST", "support", (("name", "helpfulness"), ("value", "4"))),
        Page("add comment", f"/c/{c}/comment", "POST", "support", (("body", "matrix comment"),)),
        Page("edit comment", f"/comments/{review['comment']}/edit", "POST", "support", (("body", "edited"),)),
        Page("delete comment", f"/comments/{review['comment']}/delete", "POST", "support"),
        Page("comment search", "/comments/?q=matrix", "GET", "support"),
        Page("inbox", "/inbox/", "GET", "support"),
        Page("queues", "/queues/", "GET", "support"),
        Page("queue", f"/queues/{review['queue']}/", "GET", "support"),
        Page("queue next", f"/queues/{review['queue']}/next", "POST", "support"),
        Page("queue item done", f"/queues/items/{review['item']}/done", "POST", "support"),
        Page("new queue", "/queues/new", "POST", "operator", (("name", "m"), ("source", "/conversations/"))),
        Page("score names", "/settings/scores/", "GET", "admin"),
        Page("share policy", "/settings/sharing/", "GET", "admin"),
        Page("create share link", f"/c/{c}/share", "POST", "admin"),
        Page("export review", f"/c/{c}/review.json", "GET", "admin"),
        Page("revoke share link", f"/share-links/{review['link']}/revoke", "POST", "admin"),
        # Saved views (issue 26).
        Page("saved view", f"/views/{view.pk}/", "GET", "support"),
        Page("save view", "/views/new", "POST", "operator", (("name", "matrix view"), ("query", "sort=oldest"))),
        Page("delete view", f"/views/{view.pk}/delete", "POST", "admin"),
    ]


def _review_objects(tenant: Tenant, conversation: Conversation, member: Membership) -> dict[str, int]:
    """A score name, a comment, a queue with an item and a share link of `tenant`, for the review rows."""
    if not scores.definitions(tenant):
        scores.define_score(tenant, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="matrix")
    ReviewPolicy.objects.update_or_create(tenant=tenant, defaults={"share_links_enabled": True})
    comment = comments.add_comment(tenant, conversation, Target(), "matrix", author=member.user)
    queue = queues.create_queue(tenant, "matrix", "/conversations/", actor=member.user, select=conversations_for)
    link, _ = share_links.create_link(tenant, conversation, actor=member.user)
    item = queue.items.order_by("order").first()
    assert item is not None
    return {"comment": comment.pk, "queue": queue.pk, "item": item.pk, "link": link.pk}


OBJECT_PAGES = {
    "conversation",
    "transcript window",
    "timeline",
    "run",
    "legacy conversation url",
    "legacy run url",
    "snapshots",
    "snapshot diff",
    "receipts",
    "add receipt",
    "add wait",
    "resolve wait",
    "add merge",
    "run audit",
    "re-audit",
    "re-index",
    "export conversation",
    "reveal",
    "withdraw invitation",
    "member role",
    "member remove",
    "api key revoke",
    "set score",
    "add comment",
    "edit comment",
    "delete comment",
    "queue",
    "queue next",
    "queue item done",
    "create share link",
    "revoke share link",
    "export review",
    "saved view",
    "delete view",
}

RANK = {"support": 1, "operator": 2, "admin": 3}


def request(client: Client, page: Page) -> "TestResponse":
    if page.method == "POST":
        return client.post(page.url, dict(page.data))
    return client.get(page.url)
