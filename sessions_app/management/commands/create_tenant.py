from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.text import slugify

from sessions_app.models import Tenant


class Command(BaseCommand):
    help = "Create a tenant."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", required=True)

    def handle(self, *args: Any, slug: str, name: str, **options: Any) -> None:
        if slugify(slug) != slug:
            raise CommandError(f"Tenant slug {slug!r} must be lowercase letters, digits and hyphens.")
        if Tenant.objects.filter(slug=slug).exists():
            raise CommandError(f"Tenant {slug!r} already exists.")
        Tenant.objects.create(slug=slug, name=name)
        self.stdout.write(f"Created tenant {slug} ({name}).")
