"""`manage.py fold_worker`: fold search tails and rebuild pending conversations until stopped (SIGTERM, Ctrl-C).

`manage.py serve` supervises one; run one by hand beside any other server. `--once` does one pass and returns.
"""

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from search_app import fold_worker


class Command(BaseCommand):
    help = "Fold search tails and rebuild pending conversations in the background, until stopped (or --once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="One pass over the tenants with work, then return.")
        parser.add_argument("--interval", type=float, default=settings.SESSIONDESK_FOLD_WORKER_INTERVAL,
                            help="Seconds between two passes while there is nothing to do.")

    def handle(self, *args: Any, once: bool, interval: float, **options: Any) -> None:
        if interval <= 0:
            raise CommandError("--interval must be a positive number of seconds.")
        if once:
            done = fold_worker.run_pass()
            self.stdout.write(
                f"{done.tenants} tenant(s) worked, {done.skipped} claimed by another worker, "
                f"{done.conversations} conversation(s) rebuilt."
            )
            return
        stopping = threading.Event()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda signum, frame: stopping.set())
            signal.signal(signal.SIGINT, lambda signum, frame: stopping.set())
        fold_worker.run(interval, stopping)
