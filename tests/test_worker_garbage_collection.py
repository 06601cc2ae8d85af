"""A web worker runs Python's full garbage collection after a response is written, never inside a request
(config.gunicorn): with a large conversation's transcripts kept, one took 145 ms and set the OTLP export's p95."""

import gc
from collections.abc import Iterator

import pytest

from config import gunicorn as serve_config


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of each collection Python runs while the test does, with the collector restored after."""
    threshold = gc.get_threshold()
    seen: list[int] = []

    def probe(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            seen.append(info["generation"])

    gc.callbacks.append(probe)
    try:
        yield seen
    finally:
        gc.callbacks.remove(probe)
        gc.unfreeze()
        gc.set_threshold(*threshold)


def make_cycles(count: int) -> list[list[object]]:
    """`count` cycles, kept (as a worker keeps transcripts): they survive into the oldest generation, and enough
    of them make Python's own rule for a full collection fire."""
    kept = []
    for _ in range(count):
        cycle: list[object] = []
        cycle.append(cycle)
        kept.append(cycle)
    return kept


def test_a_worker_freezes_what_it_loaded(collections):
    serve_config.post_worker_init(worker=None)
    assert gc.get_freeze_count() > 1000  # Django, the app and their imports: never walked again


def test_requests_run_no_full_collection_and_the_hook_after_them_does(collections):
    serve_config.post_worker_init(worker=None)
    kept = make_cycles(500_000)  # enough that Python would have run full collections by its defaults
    assert collections.count(1) >= serve_config.FULL_COLLECTION_AFTER
    assert 2 not in collections
    del kept
    serve_config.post_request(worker=None, request=None, environ={}, response=None)
    assert collections.count(2) == 1
    assert gc.get_count()[2] == 0
    serve_config.post_request(worker=None, request=None, environ={}, response=None)
    assert collections.count(2) == 1  # not due again until as many middle collections have run


def test_by_default_python_would_run_them_inside_the_request(collections):
    """The same work without the hooks: the full collections happen while it runs (what the hooks move)."""
    gc.collect()
    make_cycles(500_000)
    assert 2 in collections
