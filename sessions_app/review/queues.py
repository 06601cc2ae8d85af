"""Review queues: an operator fills one from a list filter URL or a search; reviewers take the next open item,
score and comment it, and mark it done. Taking an item locks the queue's next open row (`SELECT … FOR UPDATE
SKIP LOCKED` on PostgreSQL), so two reviewers taking at once get different items."""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from input_errors import RejectedInput
from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import ItemState, ReviewItem, ReviewQueue, Tenant
from sessions_app.tenancy.scoping import scoped

MAX_ITEMS = 500

type Selector = Callable[[Tenant, str, int], list[int]]
"""What fills a queue: the pks of the conversations a source (a list filter URL, a search) selects in the tenant,
in the order its page shows them, at most the number given; RejectedInput for a source it cannot read. The
dashboard's, which reads its own pages' URLs, is `dashboard.filter_urls.conversations_for`."""


def create_queue(tenant: Tenant, name: str, source: str, *, actor: User, select: Selector) -> ReviewQueue:
    name = name.strip()
    if not name or len(name) > 200:
        raise RejectedInput("A queue needs a name of at most 200 characters.")
    if len(source) > 2000:
        raise RejectedInput("The filter or search is at most 2,000 characters.")
    pks = select(tenant, source, MAX_ITEMS)[:MAX_ITEMS]
    if not pks:
        raise RejectedInput("That filter or search selects no conversation; nothing to review.")
    with transaction.atomic():
        queue = ReviewQueue.objects.create(tenant=tenant, name=name, source=source.strip(), created_by=actor)
        ReviewItem.objects.bulk_create(
            [ReviewItem(tenant=tenant, queue=queue, conversation_id=pk, order=i) for i, pk in enumerate(pks)]
        )
        record_event(tenant, EventClass.QUEUE_CHANGED, actor=actor.get_username())
    return queue


def take_next(tenant: Tenant, queue: ReviewQueue, reviewer: User) -> ReviewItem | None:
    """The reviewer's item in review, else the next open one, now theirs; None when nothing is left."""
    with transaction.atomic():
        # The conversation is read with the item (its id goes in the audit event), the tenant named on both.
        items = scoped(ReviewItem, tenant).filter(queue=queue, conversation__tenant=tenant)
        items = items.select_related("conversation")
        mine = items.filter(state=ItemState.TAKEN, reviewer=reviewer).order_by("order").first()
        if mine is not None:
            return mine
        open_items = items.filter(state=ItemState.OPEN).order_by("order")
        if connection.features.has_select_for_update_skip_locked:
            open_items = open_items.select_for_update(skip_locked=True, of=("self",))
        item = open_items.first()
        if item is None:
            return None
        _move(tenant, item, reviewer, ItemState.TAKEN, "taken_at")
    return item


def mark_done(tenant: Tenant, item: ReviewItem, reviewer: User) -> ReviewItem:
    """Done by `reviewer`: refused (409) when it is done already or another reviewer has it, judged on the row as
    locked, so two reviewers finishing at once cannot both record it."""
    with transaction.atomic():
        rows = scoped(ReviewItem, tenant).filter(pk=item.pk, conversation__tenant=tenant)
        item = rows.select_related("conversation").select_for_update(of=("self",)).get()
        if item.state == ItemState.DONE:
            raise RejectedInput("This item is already done.", status=409)
        if item.state == ItemState.TAKEN and item.reviewer_id != reviewer.pk:
            raise RejectedInput("Another reviewer has this item.", status=409)
        _move(tenant, item, reviewer, ItemState.DONE, "done_at")
    return item


def _move(tenant: Tenant, item: ReviewItem, reviewer: User, state: ItemState, stamp: str) -> None:
    item.state, item.reviewer = state, reviewer
    setattr(item, stamp, timezone.now())
    scoped(ReviewItem, tenant).filter(pk=item.pk).update(
        state=state, reviewer=reviewer, **{stamp: getattr(item, stamp)}
    )
    record_event(
        tenant,
        EventClass.REVIEW_ITEM_CHANGED,
        actor=reviewer.get_username(),
        conversation_id=item.conversation.external_id,
    )


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    taken: int
    by_reviewer: list[tuple[str, int]]  # done items per reviewer, most first

    @property
    def open(self) -> int:
        return self.total - self.done - self.taken


def progress(tenant: Tenant, queue: ReviewQueue) -> Progress:
    rows = scoped(ReviewItem, tenant).filter(queue=queue).values_list("state", "reviewer__username")
    states: Counter[str] = Counter()
    done_by: Counter[str] = Counter()
    for state, username in rows:
        states[state] += 1
        if state == ItemState.DONE:
            done_by[username or "(removed)"] += 1
    total = sum(states.values())
    return Progress(total, states[ItemState.DONE], states[ItemState.TAKEN], done_by.most_common())


def queues(tenant: Tenant) -> list[ReviewQueue]:
    return list(scoped(ReviewQueue, tenant).select_related("created_by").order_by("-created_at", "-pk"))


def items_of(tenant: Tenant, queue: ReviewQueue) -> list[ReviewItem]:
    return list(
        scoped(ReviewItem, tenant)
        .filter(queue=queue, conversation__tenant=tenant)
        .select_related("conversation", "reviewer")
        .order_by("order")
    )
