"""Recovery is a pure module: importing it loads neither Django nor pydantic-ai-harness."""

import subprocess
import sys
from pathlib import Path


def test_importing_recovery_loads_neither_django_nor_the_harness():
    code = (
        "import sys; import sessions_app.core.recovery; "
        "print(sorted(m for m in ('django', 'pydantic_ai_harness') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
