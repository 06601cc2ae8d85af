"""What a process keeps between requests is bounded by what it weighs (`core.sized_lru`), the least recently
written forgotten first."""

import threading

from sessions_app.core.sized_lru import SizedLRU


def texts(limit: int) -> SizedLRU[str, str]:
    return SizedLRU(limit, len)


def test_the_least_recently_written_go_first_once_the_weight_passes_the_limit():
    kept = texts(10)
    kept.put("a", "aaaa")
    kept.put("b", "bbbb")
    kept.put("a", "AAAA")  # written again: now the most recent
    kept.put("c", "cc")
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == ("AAAA", "bbbb", "cc")
    kept.put("d", "d")
    assert kept.get("b") is None  # 11 held: the oldest write goes
    assert (kept.get("a"), kept.get("c"), kept.get("d")) == ("AAAA", "cc", "d")


def test_reading_does_not_make_a_value_recent():
    kept = texts(8)
    kept.put("a", "aaaa")
    kept.put("b", "bbbb")
    assert kept.get("a") == "aaaa"
    kept.put("c", "c")
    assert kept.get("a") is None
    assert kept.get("b") == "bbbb"


def test_a_value_heavier_than_the_limit_is_not_kept_and_takes_nothing_with_it_when_replaced():
    kept = texts(10)
    kept.put("a", "aaaa")
    kept.put("big", "x" * 11)
    assert kept.get("big") is None
    assert kept.get("a") is None  # forgotten first, as the least recent
    kept.put("a", "aaaaaaaaa")
    kept.put("a", "a")  # the weight of what it replaced is given back
    kept.put("b", "bbbbbbbbb")
    assert (kept.get("a"), kept.get("b")) == ("a", "bbbbbbbbb")


def test_clear_forgets_everything_and_the_weight_with_it():
    kept = texts(4)
    kept.put("a", "aaaa")
    kept.clear()
    assert kept.get("a") is None
    kept.put("b", "bbbb")
    assert kept.get("b") == "bbbb"


def test_writers_on_threads_leave_the_weight_within_the_limit():
    kept = texts(100)

    def write(prefix: str) -> None:
        for n in range(2000):
            kept.put(f"{prefix}{n % 50}", "x" * (n % 7 + 1))

    threads = [threading.Thread(target=write, args=(p,)) for p in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    held = [kept.get(f"{p}{n}") for p in "abcd" for n in range(50)]
    assert sum(len(v) for v in held if v is not None) <= 100
