"""gunicorn's settings for `manage.py serve` (loaded with `--config python:config.gunicorn`).

gunicorn writes a `Server:` header naming itself on every answer and has no setting for it; its response class
reads the module's SERVER when it answers, so the name is replaced here, before any worker serves. The header
stays (HTTP allows any product token), but it names no server software or version an attacker could match.

The master also supervises the search fold worker (`manage.py fold_worker`, search_app.fold_worker), a process of
its own beside the web workers: started once gunicorn is ready, started again within a second whenever it exits,
stopped with the server. Its work lives in the database, so a restart loses nothing. `SESSIONDESK_FOLD_WORKER=false`
leaves it to another host.

Each web worker runs Python's full garbage collection itself, after a response is written, not inside whichever
request crosses the threshold: it walks every object the process keeps (the transcripts, messages and folds kept
for the conversations being written), and at a 1,000-message conversation one took 145 ms, in both workers near
the same moment, which set the OTLP export's p95 (docs/BENCHMARKS.md, issue 24). What a worker loaded at start
is frozen out of every collection.
"""

import contextlib
import gc
import os
import signal
import sys
import threading
import time
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
_worker: list[int] = []


def _spawn() -> int:
    # posix_spawn, not subprocess.Popen: Popen waits for the exec on a pipe, and a web worker the arbiter forks in
    # that moment inherits the pipe's write end and keeps it open for its whole life, so the supervisor would wait
    # for ever and never restart the fold worker (seen under load).
    return os.posix_spawn(sys.executable, [sys.executable, str(_MANAGE), "fold_worker"], os.environ)


def _exited(pid: int) -> bool:
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # the arbiter's waitpid(-1) reaps every child it sees exit, ours included
        return True
    return reaped == pid


def _supervise() -> None:
    while not _stopping.is_set():
        pid = _spawn()
        _worker[:] = [pid]
        while not _exited(pid) and not _stopping.wait(1.0):
            pass
        _stopping.wait(1.0)  # a worker that fails at once is not restarted in a tight loop


FULL_COLLECTION_AFTER = 10  # collections of the middle generation between two full ones: Python's own default


def post_worker_init(worker: Any) -> None:
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 2**31 - 1)  # no full collection of Python's own; post_request runs them


def post_request(worker: Any, request: Any, environ: Any, response: Any) -> None:
    if gc.get_count()[2] >= FULL_COLLECTION_AFTER:
        gc.collect()


def when_ready(server: Any) -> None:
    if not env_bool("SESSIONDESK_FOLD_WORKER", True):  # the same variable as settings.SESSIONDESK_FOLD_WORKER
        return
    threading.Thread(target=_supervise, name="fold-worker-supervisor", daemon=True).start()


def on_exit(server: Any) -> None:
    _stopping.set()
    for pid in _worker:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 30
        while not _exited(pid):
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.1)
