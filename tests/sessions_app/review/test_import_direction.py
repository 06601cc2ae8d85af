"""review is a room of services that the doors call: it imports nothing of the dashboard or the API. What only a
door knows (how a list filter URL reads, how big a page is) is handed to it by the door.

Every module of sessions_app/review is parsed, not imported, so an import inside a function counts as much as
one at the top.
"""

import ast
from pathlib import Path

import pytest

REVIEW = Path(__file__).resolve().parents[3] / "sessions_app" / "review"
DOORS = ("sessions_app.dashboard", "sessions_app.api")


def door_imports(source: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        found += [
            f"line {node.lineno}: {name}"
            for name in names
            if any(name == door or name.startswith(f"{door}.") for door in DOORS)
        ]
    return found


def test_the_rule_itself_finds_what_it_says():
    assert door_imports("from sessions_app.dashboard.forms import X\nimport sessions_app.api.auth") == [
        "line 1: sessions_app.dashboard.forms.X",
        "line 2: sessions_app.api.auth",
    ]
    assert door_imports("from sessions_app import dashboard") == ["line 1: sessions_app.dashboard"]
    assert door_imports("from sessions_app.models import Score\nfrom sessions_app.review import scores") == []


@pytest.mark.parametrize("path", sorted(REVIEW.rglob("*.py")), ids=lambda p: p.name)
def test_review_imports_nothing_of_the_dashboard_or_the_api(path):
    assert door_imports(path.read_text()) == []
