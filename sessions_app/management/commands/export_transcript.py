from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.models import Conversation
from sessions_app.tenancy.scoping import scoped, tenant_for_command
from sessions_app.transcripts.export import FORMATS, export_conversation


class Command(BaseCommand):
    help = "Write a conversation's recovered transcript to stdout."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--conversation", required=True)
        parser.add_argument("--format", choices=FORMATS, default="json")

    def handle(self, *args: Any, tenant: str, conversation: str, format: str, **options: Any) -> None:
        found = tenant_for_command(tenant)
        target = scoped(Conversation, found).filter(external_id=conversation).first()
        if target is None:
            raise CommandError(f"No conversation {conversation!r} in tenant {tenant!r}.")
        for chunk in export_conversation(target, format):
            self.stdout.write(chunk, ending="")
