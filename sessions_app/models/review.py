"""Marks people leave on conversations (issue 27): score definitions and scores, comments with their earlier
versions and mentions, review queues and their items, and share links. Every row names its tenant, `tenant_id`
leads every index and unique key, and every row that is about a conversation cascades with it, so retention and
deletion take scores, comments and queue items along.

Foreign keys between tenant-owned tables are declared without a database constraint (`db_constraint=False`): on
PostgreSQL migration 0015 adds them as (tenant_id, x_id) -> (tenant_id, id), as search_app's 0006 did for the
older tables (docs/SCALING.md), and on SQLite the ORM's cascades keep them."""

from django.conf import settings
from django.db import models

from sessions_app.models.store import Conversation, Tenant
from sessions_app.review.score_values import ScoreKind, ScoreShape


class ScoreDefinition(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=[(k.value, k.value) for k in ScoreKind])
    minimum = models.FloatField(null=True, blank=True)
    maximum = models.FloatField(null=True, blank=True)
    categories = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="scoredefinition_unique")]

    def __str__(self) -> str:
        return self.name

    @property
    def shape(self) -> ScoreShape:
        return ScoreShape(self.name, ScoreKind(self.kind), self.minimum, self.maximum, tuple(self.categories))


class Score(models.Model):
    """One author's value of one score on one target (the conversation, a run, a message); setting it again
    replaces it. `author` is `user:<username>` or `api-key:<prefix>`."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    definition = models.ForeignKey(
        ScoreDefinition, on_delete=models.CASCADE, related_name="scores", db_constraint=False
    )
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="scores", db_constraint=False)
    target = models.CharField(max_length=220, default="c")
    number = models.FloatField(null=True, blank=True)
    text = models.CharField(max_length=64, blank=True)
    author = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "definition", "conversation", "target", "author"], name="score_unique"
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "conversation"], name="score_tenant_conversation"),
            # A score sort walks one of these in order and stops at a page of conversations (review/scores.py):
            # best value first, ties newest first, either way up.
            models.Index(fields=["tenant", "definition", "number", "conversation"], name="score_sort_high_first"),
            models.Index(fields=["tenant", "definition", "number", "-conversation"], name="score_sort_low_first"),
        ]


class Comment(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="comments", db_constraint=False
    )
    target = models.CharField(max_length=220, default="c")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "conversation", "created_at"], name="comment_tenant_conversation")]


class CommentRevision(models.Model):
    """A comment's text before an edit: edits are kept."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="revisions", db_constraint=False)
    body = models.TextField()
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "comment"], name="commentrevision_tenant_comment")]


class Mention(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="mentions", db_constraint=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "comment", "user"], name="mention_unique")]
        indexes = [models.Index(fields=["tenant", "user", "-created_at"], name="mention_tenant_user")]


class ReviewQueue(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    source = models.CharField(max_length=2000, help_text="The list filter or search it was filled from.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"], name="reviewqueue_tenant_recent")]


class ItemState(models.TextChoices):
    OPEN = "open", "Open"
    TAKEN = "taken", "In review"
    DONE = "done", "Done"


class ReviewItem(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items", db_constraint=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    order = models.PositiveIntegerField()
    state = models.CharField(max_length=8, choices=ItemState.choices, default=ItemState.OPEN)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    taken_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "queue", "conversation"], name="reviewitem_unique"),
        ]
        indexes = [models.Index(fields=["tenant", "queue", "state", "order"], name="reviewitem_tenant_queue")]


class ReviewPolicy(models.Model):
    """A tenant's share-link policy: off until an admin turns it on."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="+")
    share_links_enabled = models.BooleanField(default=False)
    share_link_days = models.PositiveIntegerField(default=7)


class ShareLink(models.Model):
    """A read-only link to one conversation. The token is signed (django.core.signing) over this row's id and
    tenant; the row decides whether it still opens (expiry, revocation)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "conversation"], name="sharelink_tenant_conversation")]
