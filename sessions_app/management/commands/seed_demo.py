"""Demo data made by real agents: FunctionModel-driven pydantic-ai runs with the harness's StepPersistence and
compaction, ingested through the same service as the API."""

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart

from sessions_app.audit.digests import prompt_sha256
from sessions_app.audit.evidence import add_receipt, add_wait, set_prompt_contract
from sessions_app.demo.plans import DEMO_SYSTEM_PROMPT
from sessions_app.ingest.payloads import SnapshotPayload, parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Membership, Role, Run, Tenant
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.tenancy.scoping import scoped

DEMO_TENANTS = {"acme": "Acme Corp", "globex": "Globex"}
# The demo's agents run on FunctionModels that no price list knows: the demo tenants carry negotiated prices for them
# (USD per million tokens, as an admin sets on Admin · Prices), so the list and the overview show costs.
DEMO_PRICES = {
    "scenario-model": {"input": "3", "output": "15", "cache_read": "0.3"},
    "scenario-summarizer": {"input": "0.25", "output": "2"},
}
DEMO_PASSWORD = "sessiondesk-demo"  # noqa: S105  # the demo's sign-in, printed by this command: not a secret


def _with_orphan_result(payload: dict[str, Any]) -> SnapshotPayload:
    """An application that saved its own copy of a history, with a stray tool result a retried worker left in it
    (pydantic-ai drops such results before a request, so the harness never persists one itself)."""
    history = parse_snapshot(payload).messages
    stray = ModelRequest(
        parts=[ToolReturnPart("lookup", "stale result from a retried worker", tool_call_id="retried-worker-7")]
    )
    return parse_snapshot(
        {
            "conversation_id": payload["conversation_id"],
            "run_id": f"{payload['run_id']}-saved",
            "agent": payload.get("agent") or "",
            "state": "complete",
            "messages": ModelMessagesTypeAdapter.dump_python([*history[:2], stray, *history[2:]], mode="json"),
        }
    )


class Command(BaseCommand):
    help = "Seed two demo tenants with about 50 conversations recorded by real agents, and demo logins."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--if-empty", action="store_true", help="Do nothing if any tenant exists.")
        parser.add_argument("--conversations", type=int, default=50)

    def handle(self, *args: Any, if_empty: bool, conversations: int, **options: Any) -> None:
        if Tenant.objects.exists():
            if if_empty:
                self.stdout.write("Demo data: the database already holds tenants; leaving it as it is.")
                self._print_logins()
                return
            raise CommandError("The database already holds tenants; seed_demo only fills an empty one.")
        try:
            # Not at the top: the demo recorder needs pydantic-ai-harness, an optional extra, and every other
            # command must load without it.
            from sessions_app.demo.scenarios import demo_payloads
        except ImportError:
            raise CommandError("seed_demo needs pydantic-ai-harness: pip install 'sessiondesk[harness]'.") from None
        self.stdout.write(f"Recording {conversations} demo conversations with real agents...")
        payloads_by_tenant = demo_payloads(conversations)
        keys = {}
        with transaction.atomic():
            for slug, name in DEMO_TENANTS.items():
                tenant = Tenant.objects.create(slug=slug, name=name, price_overrides=DEMO_PRICES)
                keys[slug] = create_api_key(tenant, "server", "demo server key")[1]
                payloads = payloads_by_tenant.get(slug, [])
                # The last conversation of each tenant arrived from a browser: client-supplied, untrusted.
                client_conversation = payloads[-1]["conversation_id"] if payloads else None
                by_conversation: dict[str, list[SnapshotPayload]] = {}
                for payload in payloads:
                    if payload["conversation_id"] == client_conversation:
                        payload = {**payload, "source": "client"}
                    by_conversation.setdefault(payload["conversation_id"], []).append(parse_snapshot(payload))
                for batch in by_conversation.values():
                    ingest_snapshots(tenant, batch, source="server", via="import")
                if payloads:
                    ingest_snapshots(tenant, [_with_orphan_result(payloads[0])], source="server", via="api")
            self._create_users()
            for tenant in Tenant.objects.all():
                self._add_audit_records(tenant)
        for slug, key in keys.items():
            self.stdout.write(f"Server API key for {slug} (shown once): {key}")
        self._print_logins()

    def _add_audit_records(self, tenant: Tenant) -> None:
        """Contracts for the agents, outcome receipts for some runs and a human-approval wait, so the demo shows
        every verdict rather than only missing receipts."""
        prompt_hash = prompt_sha256(DEMO_SYSTEM_PROMPT)
        for agent in ("support_agent", "billing_agent", "ops_agent"):
            set_prompt_contract(tenant, agent, {"kind": "hash", "value": prompt_hash})
        finished = list(scoped(Run, tenant).filter(state="complete", source="server").order_by("started_at", "id"))
        for index, run in enumerate(finished):
            if index % 3 == 0:
                add_receipt(
                    tenant,
                    {
                        "run_id": run.run_id,
                        "effect": "answer delivered",
                        "evidence": "outcome",
                        "checked_by": "demo-checker",
                        "reference": f"ticket-{index:04d}",
                    },
                )
            elif index % 7 == 1:
                add_wait(
                    tenant,
                    {
                        "run_id": run.run_id,
                        "owner": "finance-team",
                        "decision": "approve the refund",
                        "deadline": (timezone.now() + timedelta(days=3)).isoformat(),
                    },
                )

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
