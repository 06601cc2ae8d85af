"""Demo data made by real agents: FunctionModel-driven pydantic-ai runs with the harness's StepPersistence and
compaction, ingested through the same service as the API."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from sessions_app.api_keys import create_api_key
from sessions_app.ingestion import ingest_snapshots, parse_snapshot
from sessions_app.models import Membership, Role, Tenant

DEMO_TENANTS = {"acme": "Acme Corp", "globex": "Globex"}
DEMO_PASSWORD = "sessiondesk-demo"


class Command(BaseCommand):
    help = "Seed two demo tenants with about 50 conversations recorded by real agents, and demo logins."

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="Do nothing if any tenant exists.")
        parser.add_argument("--conversations", type=int, default=50)

    def handle(self, *args, if_empty: bool, conversations: int, **options):
        if Tenant.objects.exists():
            if if_empty:
                self.stdout.write("Demo data: the database already holds tenants; leaving it as it is.")
                self._print_logins()
                return
            raise CommandError("The database already holds tenants; seed_demo only fills an empty one.")
        try:
            from sessions_app.agent_scenarios import demo_payloads
        except ImportError:
            raise CommandError("seed_demo needs pydantic-ai-harness: pip install 'sessiondesk[harness]'.") from None
        self.stdout.write(f"Recording {conversations} demo conversations with real agents...")
        payloads_by_tenant = demo_payloads(conversations)
        keys = {}
        with transaction.atomic():
            for slug, name in DEMO_TENANTS.items():
                tenant = Tenant.objects.create(slug=slug, name=name)
                keys[slug] = create_api_key(tenant, "server", "demo server key")[1]
                payloads = payloads_by_tenant.get(slug, [])
                # The last conversation of each tenant arrived from a browser: client-supplied, untrusted.
                client_conversation = payloads[-1]["conversation_id"] if payloads else None
                by_conversation: dict[str, list] = {}
                for payload in payloads:
                    if payload["conversation_id"] == client_conversation:
                        payload = {**payload, "source": "client"}
                    by_conversation.setdefault(payload["conversation_id"], []).append(parse_snapshot(payload))
                for batch in by_conversation.values():
                    ingest_snapshots(tenant, batch, source="server", via="import")
            self._create_users()
        for slug, key in keys.items():
            self.stdout.write(f"Server API key for {slug} (shown once): {key}")
        self._print_logins()

    def _create_users(self) -> None:
        user_model = get_user_model()
        tenants = {tenant.slug: tenant for tenant in Tenant.objects.all()}
        for slug, tenant in tenants.items():
            for role in Role.values:
                user = user_model.objects.create_user(username=f"{slug}-{role}", password=DEMO_PASSWORD)
                Membership.objects.create(tenant=tenant, user=user, role=role)
        operator = user_model.objects.create_user(username="ops", password=DEMO_PASSWORD)
        for tenant in tenants.values():
            Membership.objects.create(tenant=tenant, user=operator, role=Role.OPERATOR)

    def _print_logins(self) -> None:
        self.stdout.write(
            f"Demo logins (password '{DEMO_PASSWORD}'): acme-admin, acme-operator, acme-support, globex-admin, "
            "globex-operator, globex-support, and ops (operator of both tenants)."
        )
