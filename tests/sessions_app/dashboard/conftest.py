"""Dashboard fixtures: two tenants with real agent conversations, and a member of each role in each tenant.

Conversations are written by real pydantic-ai agents (FunctionModel, the harness's StepPersistence and
compaction) and stored through the product's own ingestion, exactly as the API would store them.
"""

import copy
import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.test import Client
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.plans import ConversationPlan, ToolStep, Turn
from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, Tenant
from tests.factories import make_member, make_tenant
from tests.scenarios import run_plan

SECRET = "sk-live-0123456789abcdefghijklmnop"
PASSWORD = "pw-for-tests-1"


@functools.cache
def _payloads(plan: ConversationPlan, conversation_id: str) -> tuple[dict, ...]:
    # Running the agents is the slow part and touches no database: once per test session per plan. In a
    # thread of its own, because the scenarios call asyncio.run and browser tests already run a loop here.
    def run() -> tuple[dict, ...]:
        store = InMemoryStepStore()
        run_plan(plan, store, conversation_id=conversation_id, with_truth=False)
        return tuple(store_as_payloads(store, conversation_id))

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def ingest_plan(
    tenant: Tenant, plan: ConversationPlan, conversation_id: str, *, source: str = "server"
) -> Conversation:
    # Run ids travel in a URL path segment and may not hold '/'; conversation ids may.
    payloads = [
        parse_snapshot({**copy.deepcopy(p), "run_id": p["run_id"].replace("/", "|")})
        for p in _payloads(plan, conversation_id)
    ]
    ingest_snapshots(tenant, payloads, source=source, via="api")
    return Conversation.objects.get(tenant=tenant, external_id=conversation_id)


def deploy_plan(**overrides) -> ConversationPlan:
    """A conversation with a credential in a tool result, compaction, an orphan result and an interrupted call."""
    fields = dict(
        name="deploy",
        agent_name="deploy_agent",
        compaction="sliding_window",
        max_messages=6,
        keep_messages=3,
        turns=(
            Turn(
                prompt="Roll out checkout_v3_enabled to Zürich",
                steps=(
                    ToolStep("read_file", "deploy.env", f"DEPLOY_TOKEN={SECRET} region=eu"),
                    ToolStep("lookup", "QUOKKA-5521", "flag checkout_v3_enabled is off"),
                    ToolStep("run_query", "select 1", "1 row"),
                ),
                answer="Ready to deploy <b>rollback-v2.sh</b> & friends.",
            ),
            Turn(
                prompt="Check the flag again",
                steps=(ToolStep("lookup", "QUOKKA-5521", "flag checkout_v3_enabled is on"),),
                answer="The flag is on now.",
                inject_orphan_result=True,
            ),
            Turn(
                prompt="Deploy it now",
                steps=(ToolStep("deploy", "checkout", "accepted", fails=True),),
                answer="unused",
            ),
        ),
    )
    fields.update(overrides)
    return ConversationPlan(**fields)


def quiet_plan() -> ConversationPlan:
    return ConversationPlan(
        name="weather",
        agent_name="weather_agent",
        turns=(
            Turn(prompt="Weather in Kraków?", steps=(ToolStep("get_weather", "Kraków", "sunny"),), answer="Sunny."),
        ),
    )


@dataclass
class World:
    acme: Tenant
    globex: Tenant
    deploy: Conversation  # acme
    quiet: Conversation  # acme
    foreign: Conversation  # globex
    users: dict[str, object]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The default PBKDF2 costs about a second per password on this machine; tests need no hardening.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def build_world() -> World:
    cache.clear()
    acme = make_tenant("acme", "Acme")
    globex = make_tenant("globex", "Globex")
    users = {
        "support": make_member(acme, "support", "sam"),
        "operator": make_member(acme, "operator", "olga"),
        "admin": make_member(acme, "admin", "ada"),
        "outsider": make_member(globex, "admin", "gus"),
    }
    return World(
        acme=acme,
        globex=globex,
        deploy=ingest_plan(acme, deploy_plan(), "conv-deploy"),
        quiet=ingest_plan(acme, quiet_plan(), "conv-quiet"),
        foreign=ingest_plan(globex, deploy_plan(name="g"), "conv-globex"),
        users=users,
    )


@pytest.fixture
def world(db) -> World:
    return build_world()


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_role(world):
    return lambda role: client_for(world.users[role])
