"""Comments: markdown rendered inert, edits kept, deletion by the author or an admin, @mentions in the inbox of a
member of the tenant, text searchable by members only, and audit events that never hold the text."""

from sessions_app.models import AuditEvent, Comment, CommentRevision, Mention
from sessions_app.review import comments, scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from sessions_app.tenancy.api_keys import create_api_key

SCRIPT = "Look at this <script>alert('owned')</script> and [me](javascript:alert(1)) **now**"


def _comment(world, user="support", body="first note"):
    return comments.add_comment(world.acme, world.deploy, Target(), body, author=world.users[user])


def test_a_comment_with_a_script_tag_is_shown_inert(world, as_role):
    client = as_role("support")
    assert client.post("/c/conv-deploy/comment", {"body": SCRIPT}).status_code == 302
    page = client.get("/c/conv-deploy/").content.decode()
    assert "<script>alert('owned')</script>" not in page
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt;" in page or "&lt;script&gt;alert('owned')" in page
    assert 'href="javascript' not in page
    assert "<strong>now</strong>" in page


def test_a_comment_on_a_message_returns_to_that_message(world, as_role):
    response = as_role("support").post("/c/conv-deploy/comment", {"body": "this one", "position": "1"})
    assert response["Location"] == "/c/conv-deploy/?at=1#m-1"
    assert Comment.objects.get(tenant=world.acme).target == "m:1"


def test_an_edit_keeps_the_earlier_text(world, as_role):
    comment = _comment(world)
    assert as_role("support").post(f"/comments/{comment.pk}/edit", {"body": "second note"}).status_code == 302
    comment.refresh_from_db()
    assert comment.body == "second note" and comment.edited_at is not None
    assert list(CommentRevision.objects.filter(comment=comment).values_list("body", flat=True)) == ["first note"]
    assert "1 earlier version kept" in as_role("support").get("/c/conv-deploy/").content.decode()


def test_only_the_author_edits_and_only_the_author_or_an_admin_deletes(world, as_role):
    comment = _comment(world)
    refused = as_role("operator").post(f"/comments/{comment.pk}/edit", {"body": "hijacked"}, follow=True)
    assert "Only a comment&#x27;s author edits it." in refused.content.decode()
    as_role("operator").post(f"/comments/{comment.pk}/delete")
    comment.refresh_from_db()
    assert comment.body == "first note"
    assert as_role("admin").post(f"/comments/{comment.pk}/delete").status_code == 302
    assert not Comment.objects.filter(pk=comment.pk).exists()
    own = _comment(world, "operator")
    as_role("operator").post(f"/comments/{own.pk}/delete")
    assert not Comment.objects.filter(pk=own.pk).exists()


def test_an_empty_or_oversized_comment_is_refused_and_nothing_is_written(world, as_role):
    before = (Comment.objects.count(), AuditEvent.objects.count())
    assert as_role("support").post("/c/conv-deploy/comment", {"body": "   "}).status_code == 400
    assert as_role("support").post("/c/conv-deploy/comment", {"body": "x" * 10_001}).status_code == 400
    assert (Comment.objects.count(), AuditEvent.objects.count()) == before


def test_a_mention_of_a_member_lands_in_their_inbox_and_of_anyone_else_nowhere(world, as_role):
    # gus is a member of globex only: naming him in acme notifies nobody and tells the author nothing.
    as_role("support").post("/c/conv-deploy/comment", {"body": "@ada please look; @gus too; @nobody"})
    assert [m.user.username for m in Mention.objects.all()] == ["ada"]
    inbox = as_role("admin").get("/inbox/").content.decode()
    assert "sam mentioned you on" in inbox and "conv-deploy" in inbox and "new" in inbox
    as_role("admin").post("/inbox/")
    assert Mention.objects.get().read_at is not None
    assert "Nobody has mentioned you" in as_role("outsider").get("/inbox/").content.decode()


def test_comment_text_is_searched_by_members_and_not_by_the_transcript_search(world, as_role, client):
    _comment(world, body="zebracorn escalation needed")
    found = as_role("support").get("/comments/", {"q": "zebracorn"}).content.decode()
    assert "conv-deploy" in found and "zebracorn escalation" in found
    assert "conv-deploy" not in as_role("outsider").get("/comments/", {"q": "zebracorn"}).content.decode()
    # The transcript index (agents, API keys) never holds comment text.
    _, key = create_api_key(world.acme, "server", "t")
    api = client.get(
        "/api/v1/search", {"q": "zebracorn", "scope": "tenant"}, headers={"Authorization": f"Bearer {key}"}
    )
    assert api.status_code == 200 and api.json()["total_matches"] == 0


def test_audit_events_of_comments_never_hold_the_text(world, as_role):
    as_role("support").post("/c/conv-deploy/comment", {"body": "secretive remark 42"})
    comment = Comment.objects.get()
    as_role("support").post(f"/comments/{comment.pk}/edit", {"body": "secretive remark 43"})
    as_role("support").post(f"/comments/{comment.pk}/delete")
    events = AuditEvent.objects.filter(tenant=world.acme, event_class__startswith="comment_")
    assert [e.event_class for e in events.order_by("pk")] == ["comment_added", "comment_edited", "comment_deleted"]
    for event in events:
        assert event.actor == "sam" and event.conversation_id == "conv-deploy"
        assert "secretive" not in " ".join(str(v) for v in event.__dict__.values())


def test_exports_carry_no_comment_text(world, as_role):
    _comment(world, body="zebracorn in export?")
    export = as_role("admin").get("/c/conv-deploy/export?format=json")
    assert export.status_code == 200 and b"zebracorn" not in b"".join(export.streaming_content)


def test_the_search_page_lists_matching_comments_for_members(world, as_role):
    _comment(world, body="the flag rollout was premature")
    page = as_role("support").get("/search/", {"q": "premature"}).content.decode()
    assert 'id="comment-hits"' in page and "the flag rollout was premature" in page
    assert 'id="comment-hits"' not in as_role("outsider").get("/search/", {"q": "premature"}).content.decode()


def test_scores_and_comments_export_separately_when_asked(world, as_role):
    scores.define_score(world.acme, ScoreShape("escalate", ScoreKind.BOOLEAN), actor="ada")
    scores.set_score(world.acme, world.deploy, Target(position=1), "escalate", True, author="user:ada")
    _comment(world, body="exported note")
    assert as_role("operator").get("/c/conv-deploy/review.json").status_code == 403
    document = as_role("admin").get("/c/conv-deploy/review.json").json()
    assert document["conversation_id"] == "conv-deploy"
    assert [(s["name"], s["target"], s["number"]) for s in document["scores"]] == [("escalate", "m:1", 1.0)]
    assert [(c["author"], c["body"]) for c in document["comments"]] == [("sam", "exported note")]
    assert AuditEvent.objects.filter(tenant=world.acme, event_class="export", actor="ada").count() == 1
