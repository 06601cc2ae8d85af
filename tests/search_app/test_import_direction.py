"""search_app is a library that sessions_app calls: of sessions_app it imports only the models and the tenancy
primitives every query and write goes through (scoping, the per-tenant locks).

Every module of search_app (migrations included) is parsed, not imported, so an import inside a function counts
as much as one at the top.
"""

import ast
from pathlib import Path

import pytest

SEARCH_APP = Path(__file__).resolve().parents[2] / "search_app"
ALLOWED = {"sessions_app.models", "sessions_app.tenancy.scoping", "sessions_app.tenancy.tenant_locks"}


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every absolute import; `from a import b` is `a.b` where `a` is a package above an allowed
    module (`from sessions_app import models`), else `a`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            above = any(allowed.startswith(f"{node.module}.") for allowed in ALLOWED)
            found += [(node.lineno, f"{node.module}.{alias.name}" if above else node.module) for alias in node.names]
    return found


def refused(module: str) -> bool:
    """Whether `module` is sessions_app code other than the models and tenancy scoping (or a part of them)."""
    if module != "sessions_app" and not module.startswith("sessions_app."):
        return False
    return not any(module == allowed or module.startswith(f"{allowed}.") for allowed in ALLOWED)


def upward_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    where = path.relative_to(SEARCH_APP.parent)
    return [f"{where}:{line} imports {module}" for line, module in imported_modules(tree) if refused(module)]


def test_the_rule_itself_refuses_and_allows_what_it_says():
    assert refused("sessions_app.core.rendering")
    assert refused("sessions_app.api.auth")
    assert refused("sessions_app.tenancy.permissions")
    assert not refused("sessions_app.models")
    assert not refused("sessions_app.models.store")
    assert not refused("sessions_app.tenancy.scoping")
    assert not refused("sessions_app.tenancy.tenant_locks")
    assert not refused("model_messages.rendering")
    assert not refused("sessions_app_extra")
    parsed = ast.parse("from sessions_app import models\nfrom sessions_app import api\nimport sessions_app.core.x")
    assert [module for _, module in imported_modules(parsed) if refused(module)] == [
        "sessions_app.api",
        "sessions_app.core.x",
    ]


@pytest.mark.parametrize("path", sorted(SEARCH_APP.rglob("*.py")), ids=lambda p: str(p.relative_to(SEARCH_APP)))
def test_search_app_imports_no_sessions_app_code_but_models_scoping_and_tenant_locks(path):
    assert upward_imports(path) == []
