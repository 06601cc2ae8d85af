"""Every query the review pages and writes make reads one partition per tenant-owned table and names the tenant on
each table it joins (PostgreSQL's plans, as for the product's other hot paths), so they route to one Citus shard."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.dashboard.filter_urls import conversations_for
from sessions_app.models import ReviewPolicy, ShareLink
from sessions_app.review import comments, queues, scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from tests.sessions_app.dashboard.conftest import build_world, client_for
from tests.sessions_app.tenancy.test_schema_tenant_keys import _crossing_queries

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions and their plans are PostgreSQL's"),
]


def test_review_pages_and_writes_name_the_tenant_on_every_table():
    world = build_world()
    scores.define_score(world.acme, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="ada")
    scores.define_score(world.acme, ScoreShape("escalate", ScoreKind.BOOLEAN), actor="ada")
    ReviewPolicy.objects.create(tenant=world.acme, share_links_enabled=True)
    sam, ada = client_for(world.users["support"]), client_for(world.users["admin"])
    with CaptureQueriesContext(connection) as captured:
        sam.post("/c/conv-deploy/score", {"name": "helpfulness", "value": "4", "position": "1"})
        scores.set_score(world.acme, world.quiet, Target(), "escalate", True, author="user:ada")
        sam.post("/c/conv-deploy/comment", {"body": "@ada look"})
        comment = comments.comments_on(world.acme, world.deploy)[0].comment
        sam.post(f"/comments/{comment.pk}/edit", {"body": "@ada look again"})
        queue = queues.create_queue(
            world.acme,
            "q",
            "/conversations/?q=score:helpfulness>=1",
            actor=world.users["operator"],
            select=conversations_for,
        )
        next_url = sam.post(f"/queues/{queue.pk}/next")["Location"]
        ada.post("/c/conv-deploy/share")
        link = ShareLink.objects.get(tenant=world.acme)
        for url in (
            next_url,
            "/conversations/?q=score:helpfulness>=4 label:escalate",
            "/conversations/?q=sort:helpfulness",
            "/search/?q=deploy score:helpfulness>=1",
            "/comments/?q=look",
            "/inbox/",
            f"/queues/{queue.pk}/",
            "/queues/",
        ):
            assert sam.get(url).status_code == 200, url
        assert ada.get("/c/conv-deploy/review.json").status_code == 200
        item = queue.items.get(tenant=world.acme)
        assert sam.post(f"/queues/items/{item.pk}/done").status_code == 302
        ada.post(f"/share-links/{link.pk}/revoke")
    # Not measured: deleting a comment, whose revisions and mentions Django's collector deletes by comment id, as
    # it deletes a conversation's rows on retention (transcripts.store.delete_conversations).
    sam.post(f"/comments/{comment.pk}/delete")
    crossing = _crossing_queries(captured.captured_queries)
    assert not crossing, "\n".join(query[:300] for query in crossing)
