"""gunicorn's settings for `manage.py serve` (loaded with `--config python:config.gunicorn`).

gunicorn writes a `Server:` header naming itself on every answer and has no setting for it; its response class
reads the module's SERVER when it answers, so the name is replaced here, before any worker serves. The header
stays (HTTP allows any product token), but it names no server software or version an attacker could match.

The master also supervises the search fold worker (`manage.py fold_worker`, search_app.fold_worker), a process of
its own beside the web workers: started once gunicorn is ready, started again within a second whenever it exits,
stopped with the server. Its work lives in the database, so a restart loses nothing. `SESSIONDESK_FOLD_WORKER=false`
leaves it to another host.
"""

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import gunicorn.http.wsgi

from config.env import env_bool

gunicorn.http.wsgi.SERVER = "sessiondesk"

# The request line (method, path and query) may be as long as any query the API takes: `q` alone is up to 4,096
# characters, which percent-encoded can be 12 bytes each, and gunicorn's largest explicit limit is 8,190 bytes (a
# 414 the API never documented, for queries under its own limit). 0 is gunicorn's "unlimited", which its parser
# still holds to 1 MiB; every parameter has its own length limit, answered with a 400 that names it.
limit_request_line = 0

_MANAGE = Path(__file__).resolve().parent.parent / "manage.py"
_stopping = threading.Event()
_worker: list[subprocess.Popen[bytes]] = []


def _supervise() -> None:
    while not _stopping.is_set():
        # S603: this interpreter and manage.py, fixed arguments, no shell.
        process = subprocess.Popen([sys.executable, str(_MANAGE), "fold_worker"])  # noqa: S603
        _worker[:] = [process]
        # gunicorn's arbiter reaps every child it sees exit; Popen.poll then reports the exit all the same.
        while process.poll() is None and not _stopping.wait(1.0):
            pass
        _stopping.wait(1.0)  # a worker that fails at once is not restarted in a tight loop


def when_ready(server: Any) -> None:
    if not env_bool("SESSIONDESK_FOLD_WORKER", True):  # the same variable as settings.SESSIONDESK_FOLD_WORKER
        return
    threading.Thread(target=_supervise, name="fold-worker-supervisor", daemon=True).start()


def on_exit(server: Any) -> None:
    _stopping.set()
    for process in _worker:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
