"""`python manage.py apply_retention [--tenant SLUG] [--dry-run]`: for cron."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.models import Tenant
from sessions_app.transcripts.retention import apply_retention


class Command(BaseCommand):
    help = "Delete conversations older than each tenant's retention period (rows and index entries together)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Only this tenant (slug); default: every tenant with a retention period.")
        parser.add_argument("--dry-run", action="store_true", help="Count what would be deleted; delete nothing.")

    def handle(self, *args: Any, tenant: str | None = None, dry_run: bool = False, **options: Any) -> None:
        tenants = Tenant.objects.filter(retention_days__isnull=False).order_by("slug")
        if tenant:
            tenants = Tenant.objects.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"No tenant with slug {tenant!r}.")
        for item in tenants:
            result = apply_retention(item, dry_run=dry_run)
            if result.cutoff is None:
                self.stdout.write(f"{result.tenant}: no retention period set; nothing deleted")
                continue
            verb = "would delete" if dry_run else "deleted"
            self.stdout.write(
                f"{result.tenant}: {verb} {result.deleted} conversation(s) last updated before "
                f"{result.cutoff:%Y-%m-%d %H:%M} UTC"
            )
