from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.tenancy.scoping import tenant_for_command


class Command(BaseCommand):
    help = "Create an API key for a tenant and print it once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--kind", required=True, choices=["server", "client"])
        parser.add_argument("--label", default="")

    def handle(self, *args: Any, tenant: str, kind: str, label: str, **options: Any) -> None:
        found = tenant_for_command(tenant)
        _, raw_key = create_api_key(found, kind, label, actor="manage.py create_api_key")
        self.stderr.write(f"Created a {kind} key for {tenant}. It is shown once; store it now.")
        self.stdout.write(raw_key)
