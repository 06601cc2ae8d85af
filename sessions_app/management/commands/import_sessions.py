import signal
import threading
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError, connection, transaction

from search_app import bulk_load
from sessions_app.ingest.harness_postgres import HarnessStore, import_new
from sessions_app.ingest.importers import iter_import_file
from sessions_app.ingest.payloads import IngestError
from sessions_app.ingest.service import WRITE_ATTEMPTS, IngestResult, ingest_snapshots
from sessions_app.models import Source, Tenant
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = (
        "Import pydantic-ai-harness SqliteStepStore databases, .json message lists or API-shaped objects, and "
        ".jsonl files of API-shaped objects. Each file is one transaction, read a chunk at a time (a progress "
        "line on a terminal); importing twice changes nothing. With --harness-postgres DSN: what a harness "
        "PostgresStepStore holds that the last import did not read, and with --follow again every --interval "
        "seconds until stopped (Ctrl-C, SIGTERM)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--source", choices=Source.values, default=Source.SERVER,
                            help="Authority of the history: 'client' marks it untrusted.")
        parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
        parser.add_argument("--harness-postgres", metavar="DSN",
                            help="A pydantic-ai-harness PostgresStepStore's database, e.g. postgres://user@host/db.")
        parser.add_argument("--table", default="step_persistence",
                            help="The PostgresStepStore's table prefix (its `table` argument).")
        parser.add_argument("--follow", action="store_true",
                            help="With --harness-postgres: keep importing what is new until stopped.")
        parser.add_argument("--interval", type=float, default=5.0, help="Seconds between two reads with --follow.")
        parser.add_argument("--max-polls", type=int, default=None,
                            help="With --follow: stop after this many reads (default: until stopped).")

    def handle(self, *args: Any, tenant: str, source: str, paths: list[Path], **options: Any) -> None:
        found = tenant_for_command(tenant)
        dsn = options.get("harness_postgres")
        if dsn:
            if paths:
                raise CommandError("Give either files or --harness-postgres, not both.")
            self._import_harness_postgres(found, HarnessStore(dsn, options["table"]), source, options)
            return
        if not paths:
            raise CommandError("Give the files to import, or --harness-postgres DSN.")
        if options.get("follow"):
            raise CommandError("--follow needs --harness-postgres.")
        failures = 0
        new_messages = 0
        for path in paths:
            # Each file on its own: one bad file is reported by name and the others still import.
            try:
                result = self._import_file(found, path, source)
            except IngestError as error:
                failures += 1
                self.stderr.write(f"{path}: nothing imported: {error.message}")
                continue
            except (DatabaseError, InterfaceError, OSError, ValueError) as error:
                # The database refused or lost the file's transaction: it rolled back whole. A lost connection
                # is dropped so the next file reconnects.
                failures += 1
                self.stderr.write(f"{path}: nothing imported: {type(error).__name__}: {str(error)[:200]}")
                if isinstance(error, (OperationalError, InterfaceError)):
                    connection.close()
                continue
            new_messages += result.new_messages
            self.stdout.write(
                f"{path}: {len(result.conversations)} conversation(s), {len(result.runs)} run(s), "
                f"{len(result.created)} new snapshot(s), {len(result.repeated)} already present, "
                f"{result.new_messages} new distinct message(s), {result.tool_effects} tool-effect record(s)."
            )
        self.stdout.write(f"{len(paths) - failures} of {len(paths)} file(s) imported, {failures} failed.")
        self._settle(found, new_messages)
        if failures:
            raise CommandError(f"{failures} of {len(paths)} file(s) failed; they changed nothing.")

    def _settle(self, tenant: Tenant, new_messages: int) -> None:
        """Leave the search index as users need it before returning: folded, and analysed after a big load."""
        progress = self.stderr.isatty()

        def report(folded: int) -> None:
            if progress:
                self.stderr.write(f"\rsearch index: {folded} document(s) folded", ending="")

        folded = bulk_load.settle(tenant.id, new_messages, report)
        if progress and folded:
            self.stderr.write("")
        self.stdout.write(f"Search index: {folded} document(s) folded.")

    def _import_file(self, tenant: Tenant, path: Path, source: str) -> IngestResult:
        """One file in one transaction; a transaction the database rolled back (a lock, a deadlock, a lost
        connection) is tried again whole, as ingestion retries an API write."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return self._import_file_once(tenant, path, source)
            except (OperationalError, InterfaceError, IntegrityError):
                if attempt == WRITE_ATTEMPTS:
                    raise
                connection.close()  # a lost connection is reopened by the next query
        raise AssertionError("unreachable")

    def _import_file_once(self, tenant: Tenant, path: Path, source: str) -> IngestResult:
        """One file in one transaction, read and ingested a chunk at a time so memory follows the chunk."""
        total = IngestResult()
        progress = self.stderr.isatty()
        with transaction.atomic():
            for chunk in iter_import_file(path):
                result = ingest_snapshots(
                    tenant, chunk.snapshots, source=source, via="import", tool_effects=chunk.tool_effects
                )
                total.add(result)
                if progress:
                    self.stderr.write(
                        f"\r{path.name}: {len(total.created) + len(total.repeated)} snapshot(s), "
                        f"{total.new_messages} new message(s)",
                        ending="",
                    )
        if progress:
            self.stderr.write("")
        return total

    def _import_harness_postgres(
        self, tenant: Tenant, store: HarnessStore, source: str, options: dict[str, Any]
    ) -> None:
        """One read, or with --follow a read every --interval seconds until stopped (or --max-polls reads); a read
        that fails changes nothing, and under --follow the next one tries again."""
        follow = options["follow"]
        polls = options["max_polls"] if follow else 1
        interval = max(options["interval"], 0.0)
        previous = None
        if follow and threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _stop)
        done = 0
        try:
            while polls is None or done < polls:
                if done:
                    time.sleep(interval)
                done += 1
                try:
                    result = import_new(tenant, store, source=source)
                except (IngestError, OperationalError, InterfaceError) as error:
                    message = error.message if isinstance(error, IngestError) else f"{type(error).__name__}: {error}"
                    if not follow:
                        raise CommandError(f"nothing imported: {message}") from None
                    if isinstance(error, (OperationalError, InterfaceError)):
                        connection.close()  # reopened by the next read
                    self.stderr.write(f"nothing imported this time, trying again: {message}")
                    continue
                self._settle(tenant, result.new_messages)
                self.stdout.write(
                    f"{store.label}: {len(result.runs)} run(s) with new snapshots, {len(result.created)} new "
                    f"snapshot(s), {len(result.repeated)} already present, {result.new_messages} new distinct "
                    f"message(s), {result.tool_effects} tool-effect record(s)."
                )
                self.stdout.flush()
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM (a read interrupted midway rolled back whole).
            self.stdout.write("Stopped.")
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
