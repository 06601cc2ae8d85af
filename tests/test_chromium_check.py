"""`make test` on a bare machine: without Chromium (and no root apt to install it), the browser tests are skipped
with a message saying how to get them; under CI=true a missing Chromium fails."""

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / ".ci" / "chromium"


def run(tmp_path, **env):
    bare = tmp_path / "bin"
    bare.mkdir(exist_ok=True)
    (bare / "id").symlink_to(shutil.which("id")) if not (bare / "id").exists() else None
    # A PATH with no apt-get: nothing can be installed.
    environment = {"PATH": str(bare), "SESSIONDESK_CHROMIUM": str(tmp_path / "no-chromium"), **env}
    return subprocess.run(["/bin/bash", str(SCRIPT)], env=environment, capture_output=True, text=True)


def test_missing_chromium_skips_the_browser_tests_with_how_to_get_them(tmp_path):
    result = run(tmp_path)
    assert result.returncode == 1
    assert "SKIPPED: browser tests" in result.stderr and "apt-get install chromium" in result.stderr


def test_missing_chromium_fails_under_ci(tmp_path):
    result = run(tmp_path, CI="true")
    assert result.returncode == 2 and "CI requires Chromium" in result.stderr


def test_present_chromium_runs_them(tmp_path):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert run(tmp_path, SESSIONDESK_CHROMIUM=str(fake)).returncode == 0
    assert os.access(SCRIPT, os.X_OK)
