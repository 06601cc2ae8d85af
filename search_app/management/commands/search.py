"""`manage.py search`: the same search as the API, from a shell."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from search_app.errors import SearchError
from search_app.service import run_search
from sessions_app.models import Tenant


class Command(BaseCommand):
    help = "Search a tenant's transcripts (BM25): one conversation, one run, or the whole tenant."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query", help='Words, "phrases", -excluded, prefix*.')
        parser.add_argument("--tenant", required=True, help="Tenant slug.")
        parser.add_argument("--conversation", help="Conversation id (conversation scope).")
        parser.add_argument("--scope", choices=["conversation", "run", "tenant"], default=None)
        parser.add_argument("--run", help="Run id: search only this run.")
        parser.add_argument("--role", action="append", default=[], help="Only this role (repeatable).")
        parser.add_argument("--agent", help="Only runs of this agent.")
        parser.add_argument("--limit", type=int, default=None, help="Results, 1 to 25 (default 10).")
        parser.add_argument("--cursor", help="A previous answer's next_cursor: the next page of the same search.")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args: object, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"No tenant with slug {options['tenant']!r}.")
        scope = options["scope"] or ("run" if options["run"] and not options["conversation"] else "conversation")
        try:
            response = run_search(
                tenant=tenant,
                query=options["query"],
                scope=scope,
                conversation_id=options["conversation"],
                run_id=options["run"],
                roles=options["role"],
                agent=options["agent"],
                limit=options["limit"],
                cursor=options["cursor"],
            )
        except SearchError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(response.as_dict(), ensure_ascii=False, indent=2))
            return
        if response.message:
            self.stdout.write(response.message)
        for hit in response.results:
            self.stdout.write(
                f"[{hit.score:.3f}] conversation {hit.conversation_id} run {hit.run_id} "
                f"#{hit.position} {hit.role}: {hit.snippet}"
            )
        first = response.offset + 1
        shown = f"{first}-{response.offset + len(response.results)}" if response.results else "0"
        more = "+" if response.total_is_lower_bound else ""  # past the count bound: lower bounds
        footer = (
            f"{shown} of {response.total_matches:,}{more} matching message(s) in "
            f"{response.total_conversations:,}{more} conversation(s)"
        )
        if response.next_cursor:
            footer += f"; next page: --cursor {response.next_cursor}"
        if response.indexing:
            footer += "; the index is catching up (indexing: true)"
        if response.truncated:
            footer += "; truncated to fit the response size limit"
        self.stdout.write(footer + ".")
