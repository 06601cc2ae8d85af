"""`manage.py reindex`: rebuild the search index, or run the background reconciliation pass (`--pending`).

Schedule the pass with cron or a systemd timer, e.g. every minute: `manage.py reindex --pending`; or keep one
worker running with `manage.py reindex --pending --every 60`.
"""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from search_app import index
from sessions_app.models import Tenant


class Command(BaseCommand):
    help = "Rebuild the search index (all, or one tenant), or only conversations pending reconciliation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Only this tenant (slug).")
        parser.add_argument("--pending", action="store_true", help="Only conversations marked for reconciliation.")
        parser.add_argument("--every", type=float, default=None, help="With --pending: repeat every N seconds.")

    def handle(self, *args: object, **options: Any) -> None:
        tenant_ids = None
        if options["tenant"]:
            tenant = Tenant.objects.filter(slug=options["tenant"]).first()
            if tenant is None:
                raise CommandError(f"No tenant with slug {options['tenant']!r}.")
            tenant_ids = [tenant.id]
        if options["every"] is not None and not options["pending"]:
            raise CommandError("--every repeats the reconciliation pass; use it with --pending.")
        if options["every"] is not None and options["every"] <= 0:
            raise CommandError("--every must be a positive number of seconds.")
        while True:
            if options["pending"]:
                conversations, documents = index.reconcile_pending(tenant_ids)
            else:
                conversations, documents = index.reindex_all(tenant_ids)
            self.stdout.write(f"Reindexed {conversations} conversation(s), {documents} document(s).")
            if options["every"] is None:
                return
            time.sleep(options["every"])
