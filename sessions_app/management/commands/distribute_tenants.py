from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from sessions_app.tenancy.citus import CitusMissing, distribute_by_tenant


class Command(BaseCommand):
    help = (
        "On a Citus coordinator: make the shared tables reference tables and every tenant-owned table a "
        "distributed table on tenant_id, all colocated (docs/SCALING.md). A second run changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--shard-count", type=int, default=None, help="Shards of the colocation group (default: citus.shard_count)."
        )

    def handle(self, *args: Any, shard_count: int | None, **options: Any) -> None:
        if shard_count is not None and shard_count < 1:
            raise CommandError("--shard-count must be at least 1.")
        try:
            with transaction.atomic():
                done = distribute_by_tenant(connection, shard_count)
        except CitusMissing as error:
            raise CommandError(f"Refused, nothing changed: {error}.") from None
        layout = done.layout
        if not done.made_reference and not done.made_distributed:
            self.stdout.write(
                f"Already distributed: {len(layout.reference)} reference tables and {len(layout.distributed)} "
                f"tables distributed by tenant_id; nothing changed."
            )
            return
        self.stdout.write(
            f"Reference tables made: {', '.join(done.made_reference) or 'none'}.\n"
            f"Distributed by tenant_id, colocated with {layout.colocation_anchor}: "
            f"{', '.join(done.made_distributed) or 'none'}.\n"
            f"Local to the coordinator: {', '.join(layout.local) or 'none'}."
        )
