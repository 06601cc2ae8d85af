"""The production server: collect static files (hashed, compressed), check the deployment, run gunicorn.

    python manage.py serve [--bind 127.0.0.1:8000] [--workers N] [--timeout SECONDS]

DEBUG stays off (SECRET_KEY and ALLOWED_HOSTS come from the environment); WhiteNoise serves the collected files.
gunicorn replaces this process, so a process manager (systemd, a container) supervises it directly.
"""

import os
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Collect static files, run `check --deploy`, then serve with gunicorn workers (replaces this process)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=os.environ.get("SESSIONDESK_BIND", "127.0.0.1:8000"))
        parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2")))
        # gunicorn kills a worker silent this long: past the request deadline (a 503 the worker survives), for
        # what no signal can interrupt (docs/SECURITY.md).
        parser.add_argument("--timeout", type=int, default=int(settings.SESSIONDESK_REQUEST_DEADLINE_SECONDS) + 30)

    def handle(self, *args: Any, bind: str, workers: int, timeout: int, **options: Any) -> None:
        if settings.DEBUG:
            raise CommandError("serve is the production server: unset DEBUG (make run serves the demo).")
        env = {**os.environ, "SESSIONDESK_HASHED_STATIC": "true"}
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        for step in (["collectstatic", "--noinput", "-v", "0"], ["check", "--deploy"]):
            # S603 is a false positive: this interpreter and manage.py, fixed arguments, no shell, no request data.
            if subprocess.run([*manage, *step], env=env, check=False).returncode != 0:  # noqa: S603
                raise CommandError(f"manage.py {' '.join(step)} failed; not serving.")
        gunicorn = [
            sys.executable, "-m", "gunicorn", "config.wsgi:application", "--config", "python:config.gunicorn",
            "--bind", bind, "--workers", str(workers), "--timeout", str(timeout),
            "--access-logfile", "-", "--chdir", str(settings.BASE_DIR),
        ]  # fmt: skip
        self.stdout.write(f"Serving on http://{bind} with {workers} gunicorn worker(s).")
        self.stdout.flush()
        os.execvpe(sys.executable, gunicorn, env)  # noqa: S606  # exec without a shell is the point: gunicorn replaces us
