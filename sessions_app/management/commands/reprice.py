"""`python manage.py reprice --tenant SLUG | --all`: after a tenant's negotiated prices change, reprice old runs."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.transcripts.reprice import UnknownTenant, reprice


class Command(BaseCommand):
    help = (
        "Recompute the stored cost of every run and conversation of a tenant (or of every tenant) from its current "
        "prices, one transaction per tenant; a second run changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Reprice this tenant (slug).")
        parser.add_argument("--all", action="store_true", help="Reprice every tenant.")

    def handle(self, *args: Any, tenant: str | None = None, all: bool = False, **options: Any) -> None:
        if tenant is not None and all:
            raise CommandError("Give --tenant SLUG or --all, not both.")
        if tenant is None and not all:
            raise CommandError("Say which tenants to reprice: --tenant SLUG or --all.")
        try:
            results = reprice(tenant)
        except UnknownTenant as error:
            raise CommandError(str(error)) from None
        for result in results:
            self.stdout.write(str(result))
