"""A long history sent again looks up by sha256 only its new messages: the ids of the messages already stored come
from the conversation's current fold (POST) or from the stored copies OTLP read (checked by primary key), and the
references stored are the ones the slow path (every message looked up by sha256) stores."""

import json
from collections import OrderedDict
from collections.abc import Callable

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest import service, traces
from sessions_app.ingest.message_memo import MEMO, MessageMemo
from sessions_app.models import Conversation, Snapshot, SnapshotMessage, StoredMessage, Tenant
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.transcripts import fold_cache
from sessions_app.transcripts.export import export_conversation
from tests.agents import weather_agent
from tests.sessions_app.ingest.test_otlp_fast_path import threaded_exports, without_times

RUNS = 12


def histories(runs: int) -> list[list]:
    agent = weather_agent()
    history = None
    out = []
    for n in range(runs):
        history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
        out.append(history)
    return out


def referenced_shas(tenant: Tenant) -> list[list[str]]:
    """Each snapshot's references (in write order) as the sha256 of the stored message they name."""
    sha_of = dict(StoredMessage.objects.filter(tenant=tenant).values_list("id", "sha256"))
    snapshots = Snapshot.objects.filter(tenant=tenant).order_by("id")
    return [[sha_of[message_id] for message_id in ids] for ids in snapshots.values_list("message_ids", flat=True)]


def looked_up(monkeypatch) -> list[int]:
    """How many messages each ingest looked up by sha256."""
    sizes: list[int] = []
    real = service.store_messages

    def counting(tenant_id, wanted):
        sizes.append(len(wanted))
        return real(tenant_id, wanted)

    monkeypatch.setattr(service, "store_messages", counting)
    return sizes


def post_all(
    client, key: str, runs: list[list], *, before: Callable[[int], None] = lambda n: None, start: int = 0
) -> None:
    """Each history POSTed as run `start`, `start` + 1 and on, `before(n)` called ahead of run n."""
    for n, history in enumerate(runs, start):
        before(n)
        body = {
            "conversation_id": "long",
            "run_id": f"long-{n}",
            "step": 1,
            "state": "complete",
            "messages": ModelMessagesTypeAdapter.dump_python(history, mode="json"),
        }
        response = client.post(
            "/api/v1/snapshots", data=json.dumps(body), content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )  # fmt: skip
        assert response.status_code == 201, response.content


@pytest.mark.django_db
def test_a_history_posted_again_looks_up_only_its_new_messages_and_stores_the_same_references(client, monkeypatch):
    runs = histories(RUNS)
    fast, slow = Tenant.objects.create(slug="fast", name="fast"), Tenant.objects.create(slug="slow", name="slow")
    _, fast_key = create_api_key(fast, "server")
    _, slow_key = create_api_key(slow, "server")
    fold_cache.forget_all()
    sizes = looked_up(monkeypatch)
    post_all(client, fast_key, runs)
    fast_sizes = list(sizes)
    sizes.clear()
    # Another process wrote the conversation last, and this one kept no fold of it.
    post_all(client, slow_key, runs, before=lambda n: fold_cache.forget_all())

    # Past the first run only the run's four new messages are looked up; without a current fold, every message.
    assert fast_sizes == [4] * RUNS
    assert sizes == [4 * (n + 1) for n in range(RUNS)]
    assert referenced_shas(fast) == referenced_shas(slow)
    assert [len(refs) for refs in referenced_shas(fast)] == [4 * (n + 1) for n in range(RUNS)]
    for tenant in (fast, slow):
        conversation = Conversation.objects.get(tenant=tenant, external_id="long")
        assert conversation.message_count == 4 * RUNS


@pytest.mark.django_db
def test_on_two_workers_in_turns_a_post_looks_up_only_its_new_messages(
    client, monkeypatch, django_capture_on_commit_callbacks
):
    """A worker whose fold is from before the other worker's write folds that write in first (under the
    conversation's lock, before storing anything), so its fold names the whole history's rows again: past each
    worker's first write, a POST looks up only its run's new messages, and stores the slow path's references."""
    runs = histories(RUNS)
    turns, slow = Tenant.objects.create(slug="turns", name="turns"), Tenant.objects.create(slug="slow", name="slow")
    _, turns_key = create_api_key(turns, "server")
    _, slow_key = create_api_key(slow, "server")
    folds: dict[int, OrderedDict] = {0: OrderedDict(), 1: OrderedDict()}
    memos = {0: vars(MessageMemo()), 1: vars(MessageMemo())}  # each worker validates what it was sent itself
    sizes = looked_up(monkeypatch)

    def worker_of(n: int) -> None:
        monkeypatch.setattr(fold_cache, "_kept", folds[n % 2])
        MEMO.__dict__ = memos[n % 2]

    try:
        for n, history in enumerate(runs):
            with django_capture_on_commit_callbacks(execute=True):  # each POST commits; its worker keeps its fold
                post_all(client, turns_key, [history], before=worker_of, start=n)
    finally:
        MEMO.__dict__ = vars(MessageMemo())
    monkeypatch.setattr(fold_cache, "_kept", OrderedDict())
    turns_sizes = list(sizes)
    post_all(client, slow_key, runs, before=lambda n: fold_cache.forget_all())

    # The second worker's first write knows nothing, so it looks up the first run's messages and its own.
    assert turns_sizes == [4, 8] + [4] * (RUNS - 2)
    assert referenced_shas(turns) == referenced_shas(slow)
    conversation = Conversation.objects.get(tenant=turns, external_id="long")
    assert conversation.message_count == 4 * RUNS


@pytest.mark.django_db
def test_an_otlp_run_takes_the_ids_of_its_inherited_copies_even_without_a_current_fold(client, tenant, monkeypatch):
    traces.forget_stored_copies()
    fold_cache.forget_all()
    _, key = create_api_key(tenant, "server")
    bodies, history = threaded_exports(RUNS)
    sizes = looked_up(monkeypatch)
    for body in bodies:
        fold_cache.forget_all()  # as when each export lands on another gunicorn worker than the last
        response = client.post(
            "/v1/traces", data=body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        assert response.status_code == 200, response.content
    # Recovery from scratch resolves nothing new either; ingestion looked up the four new messages of each run.
    assert sizes[0] == 4 and all(size == 4 for size in sizes[1:] if size)
    refs = referenced_shas(tenant)
    assert [len(r) for r in refs] == [4 * (n + 1) for n in range(RUNS)]
    assert all(later[: len(earlier)] == earlier for earlier, later in zip(refs, refs[1:], strict=False))
    conversation = Conversation.objects.get(tenant=tenant, external_id="fast")
    exported = json.loads("".join(export_conversation(conversation, "json")))
    assert without_times(exported) == without_times(ModelMessagesTypeAdapter.dump_python(history, mode="json"))


@pytest.mark.django_db
def test_a_claimed_id_the_tenant_no_longer_has_is_looked_up_by_sha256(tenant, monkeypatch):
    """An id read from the stored transcript whose row went since (a conversation deleted meanwhile) is not
    referenced: the message is looked up and stored again by its sha256."""
    from sessions_app.ingest.payloads import parse_snapshot

    history = histories(1)[0]
    messages = ModelMessagesTypeAdapter.dump_python(history, mode="json")
    payload = parse_snapshot({"conversation_id": "gone", "run_id": "gone-1", "messages": messages})
    missing = (StoredMessage.objects.order_by("-id").values_list("id", flat=True).first() or 0) + 1000
    claimed = {id(message): missing for message in payload.messages}
    service.ingest_snapshots(tenant, [payload], source="server", via="api", known_ids=claimed)
    referenced = set(SnapshotMessage.objects.filter(tenant=tenant).values_list("message_id", flat=True))
    assert missing not in referenced
    assert referenced == set(StoredMessage.objects.filter(tenant=tenant).values_list("id", flat=True))
    assert len(referenced) == len(history)
