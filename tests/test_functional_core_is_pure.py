"""The functional core imports no Django (and recovery not even pydantic-ai-harness): checked in a fresh
interpreter in which importing either fails, so a stray import anywhere below these modules shows here."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PURE_MODULES = [
    "sessions_app.tenancy.citus_layout",
    "sessions_app.core.api_input",
    "input_errors",
    "sessions_app.core.paging",
    "sessions_app.core.sized_lru",
    "sessions_app.transcripts.message_facts",
    "sessions_app.dashboard.latency",
    "sessions_app.transcripts.prices",
    "sessions_app.transcripts.usage_totals",
    "sessions_app.transcripts.recovery.alignment",
    "sessions_app.transcripts.recovery.fold",
    "sessions_app.transcripts.recovery.hashing",
    "sessions_app.transcripts.recovery.summary_artifacts",
    "model_messages.rendering",
    "model_messages.serialization",
    "sessions_app.transcripts.run_timeline",
    "sessions_app.transcripts.snapshot_diff",
    "sessions_app.transcripts.transcript_layout",
    "sessions_app.dashboard.bar_charts",
    "sessions_app.dashboard.query_notes",
    "sessions_app.dashboard.typing_history",
    "sessions_app.dashboard.markup",
    "sessions_app.ingest.payloads",
    "sessions_app.ingest.otlp",
    "sessions_app.ingest.otlp_wire",
    "sessions_app.demo.plans",
    "sessions_app.client.search",
    "sessions_app.client.replay",
    "search_app.errors",
    "sessions_app.audit.digests",
    "sessions_app.audit.gates",
    "sessions_app.audit.gates.context",
    "sessions_app.audit.inputs",
    "sessions_app.audit.ledger",
    "sessions_app.audit.vocabulary",
    "search_app.bm25",
    "search_app.blocks",
    "search_app.topk",
    "search_app.query",
    "search_app.results",
    "masking",
    "masking.detectors",
    "masking.log_filter",
    "masking.tenant_patterns",
    "search_app.snippets",
    "search_app.tokenize",
    "sessions_app.review.score_values",
    "sessions_app.review.score_filters",
    "sessions_app.review.comment_markup",
    "sessions_app.review.targets",
]

# A meta path finder that refuses the blocked top-level packages, as a process without them would.
BLOCKER = """
import importlib.abc, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ImportError(f'{name} is blocked in this test')
        return None
sys.meta_path.insert(0, Blocked())
"""


def import_with_blocked(module: str, blocked: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    code = f"BLOCKED = {blocked!r}\n{BLOCKER}\nimport {module}\n"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("module", PURE_MODULES)
def test_a_core_module_imports_without_django(module):
    result = import_with_blocked(module, ("django", "django_htmx", "psycopg"))
    assert result.returncode == 0, result.stderr


def test_recovery_needs_not_even_the_harness():
    result = import_with_blocked("sessions_app.transcripts.recovery.fold", ("django", "pydantic_ai_harness"))
    assert result.returncode == 0, result.stderr


def test_the_blocker_itself_refuses_django():
    result = import_with_blocked("sessions_app.transcripts.store", ("django",))
    assert result.returncode != 0 and "blocked in this test" in result.stderr
