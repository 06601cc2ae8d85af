"""B12: a query the search reads differently from how it looks (an unclosed quote, AND/OR/NOT) says so, and a
search that finds nothing says that in words, not "0 of 0 matching messages in 0 conversations, best first"."""

from hypothesis import given
from hypothesis import strategies as st

from sessions_app.dashboard.query_notes import query_notes


def test_an_unclosed_quote_is_named_on_the_page(world, as_role):
    page = as_role("support").get('/search/?q="unclosed').content.decode()
    assert "A quote is not closed" in page


def test_boolean_operators_are_said_not_to_be_operators(world, as_role):
    page = as_role("support").get("/search/?q=a+AND").content.decode()
    assert "AND is not an operator here" in page
    alone = as_role("support").get("/search/?q=AND").content.decode()
    assert "AND is not an operator here" in alone


def test_a_search_finding_nothing_says_so_without_counting_zeros(world, as_role):
    page = as_role("support").get("/search/?q=zzyzxnothinglikethis").content.decode()
    assert "Nothing found: no message matches this search." in page
    assert "0 of 0" not in page and "best first." not in page


def test_plain_and_well_formed_queries_get_no_note():
    assert query_notes('canary deploy "roll back" -staging and or not') == []


def test_several_operators_are_named_together():
    assert query_notes("a OR b NOT c")[0].startswith("NOT, OR are not operators here")


@given(st.text(max_size=200))
def test_any_text_gets_a_list_of_sentences(query):
    notes = query_notes(query)
    assert all(isinstance(note, str) and note.endswith(".") for note in notes)
