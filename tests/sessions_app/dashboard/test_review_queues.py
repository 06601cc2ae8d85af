"""Review queues: an operator fills one from a list filter URL or a search; reviewers take the next item, score
and comment it, mark it done; the queue shows progress and who did what. Deleting a conversation takes its
scores, comments and queue items along."""

import pytest

from sessions_app.dashboard.filter_urls import conversations_for
from sessions_app.models import AuditEvent, Comment, Conversation, ItemState, ReviewItem, ReviewQueue, Score
from sessions_app.review import comments, queues, scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from sessions_app.transcripts.store import delete_conversations


def test_an_operator_fills_a_queue_from_a_list_filter_url(world, as_role):
    response = as_role("operator").post(
        "/queues/new", {"name": "weather", "source": "/conversations/?agent=weather_agent"}
    )
    queue = ReviewQueue.objects.get()
    assert response["Location"] == f"/queues/{queue.pk}/"
    assert [i.conversation.external_id for i in queue.items.all()] == ["conv-quiet"]
    assert AuditEvent.objects.filter(tenant=world.acme, event_class="queue_changed", actor="olga").count() == 1


def test_a_queue_fills_from_a_search_or_its_text(world, as_role):
    as_role("operator").post("/queues/new", {"name": "a", "source": "/search/?q=QUOKKA-5521"})
    as_role("operator").post("/queues/new", {"name": "b", "source": "Kraków"})
    by_name = {q.name: [i.conversation.external_id for i in q.items.all()] for q in ReviewQueue.objects.all()}
    assert by_name == {"a": ["conv-deploy"], "b": ["conv-quiet"]}


@pytest.mark.parametrize(
    "source, reason",
    [
        ("/conversations/?verdict=NO-SUCH", "verdict"),
        ("/search/?q=nothingmatcheszzz", "selects no conversation"),
        ("/search/", "Give a list filter URL"),
        ("/conversations/?q=score:nope>=1", "No score named"),
    ],
)
def test_a_source_that_selects_nothing_or_cannot_be_read_is_refused(world, as_role, source, reason):
    response = as_role("operator").post("/queues/new", {"name": "x", "source": source})
    assert response.status_code == 400 and reason in response.content.decode()
    assert not ReviewQueue.objects.exists() and not ReviewItem.objects.exists()


def test_support_reviews_but_does_not_fill_queues(world, as_role):
    assert as_role("support").post("/queues/new", {"name": "x", "source": "/conversations/"}).status_code == 403
    assert not ReviewQueue.objects.exists()


def test_reviewers_take_distinct_items_and_progress_says_who_did_what(world, as_role):
    queue = queues.create_queue(
        world.acme, "all", "/conversations/", actor=world.users["operator"], select=conversations_for
    )
    sam, olga = as_role("support"), as_role("operator")
    first = sam.post(f"/queues/{queue.pk}/next")["Location"]
    assert sam.post(f"/queues/{queue.pk}/next")["Location"] == first  # the item in review stays theirs
    second = olga.post(f"/queues/{queue.pk}/next")["Location"]
    assert first != second
    sam_item = ReviewItem.objects.get(reviewer=world.users["support"])
    assert olga.post(f"/queues/items/{sam_item.pk}/done").status_code == 409  # someone else's
    assert sam.post(f"/queues/items/{sam_item.pk}/done").status_code == 302
    assert sam.post(f"/queues/items/{sam_item.pk}/done").status_code == 409  # already done
    progress = queues.progress(world.acme, queue)
    assert (progress.total, progress.done, progress.taken, progress.open) == (2, 1, 1, 0)
    assert progress.by_reviewer == [("sam", 1)]
    page = sam.get(f"/queues/{queue.pk}/").content.decode()
    assert "1 of 2 done" in page and "sam (1)" in page


def test_deleting_a_conversation_removes_its_scores_comments_and_queue_items(world):
    scores.define_score(world.acme, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="ada")
    scores.set_score(world.acme, world.deploy, Target(), "helpfulness", 3, author="user:ada")
    comments.add_comment(world.acme, world.deploy, Target(position=1), "note", author=world.users["admin"])
    queue = queues.create_queue(
        world.acme, "all", "/conversations/", actor=world.users["operator"], select=conversations_for
    )
    delete_conversations(Conversation.objects.filter(pk=world.deploy.pk))
    assert not Score.objects.exists() and not Comment.objects.exists()
    assert [i.conversation_id for i in ReviewItem.objects.filter(queue=queue)] == [world.quiet.pk]
    assert ReviewItem.objects.filter(state=ItemState.OPEN).count() == 1
