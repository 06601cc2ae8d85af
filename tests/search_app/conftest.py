import pytest


@pytest.fixture(params=["in_database", "in_python"])
def ranking(request, settings):
    """Run a test under both exact rankers: BM25 in SQL (the default) and search_app.bm25 over candidates."""
    settings.SESSIONDESK_SEARCH_SQL_RANKING = request.param == "in_database"
    return request.param
