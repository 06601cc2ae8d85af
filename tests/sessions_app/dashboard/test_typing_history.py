"""B5 (pure part): a search a word longer or shorter than the one on screen is the same search being typed."""

from hypothesis import given
from hypothesis import strategies as st

from sessions_app.dashboard.typing_history import continues_typing


def test_adding_or_taking_away_words_continues_the_search():
    assert continues_typing("refund ", "refund order ")
    assert continues_typing("refund order 9018", "refund order")


def test_a_first_search_or_a_different_one_does_not():
    assert not continues_typing("", "refund")
    assert not continues_typing("refund", "invoice")
    assert not continues_typing("refund", "")


@given(st.text(max_size=50), st.text(max_size=50))
def test_it_is_symmetric(a, b):
    assert continues_typing(a, b) == continues_typing(b, a)
