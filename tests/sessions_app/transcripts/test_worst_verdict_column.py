"""A conversation's worst-verdict column is the gravest of its runs' stored verdicts (the pure `worst_verdict` over
them), blank with none, counted by the database rather than read back run by run."""

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sessions_app.audit.vocabulary import ALL_VERDICTS
from sessions_app.models import Conversation, Run
from sessions_app.models.audit import RunVerdict
from sessions_app.transcripts.list_columns import note_verdicts, worst_verdict
from tests.factories import make_tenant


@pytest.mark.django_db
def test_the_column_is_the_gravest_stored_verdict_of_each_conversation():
    tenant = make_tenant()
    chance = random.Random(25)
    expected = {}
    for n in range(12):
        conversation = Conversation.objects.create(tenant=tenant, external_id=f"c{n}")
        verdicts = [str(chance.choice(ALL_VERDICTS)) for _ in range(chance.randrange(0, 5))]
        for r, verdict in enumerate(verdicts):
            run = Run.objects.create(
                tenant=tenant, conversation=conversation, run_id=f"c{n}-r{r}", started_at=timezone.now()
            )
            RunVerdict.objects.create(tenant=tenant, run=run, verdict=verdict, updated_at=timezone.now())
        expected[conversation.pk] = worst_verdict(verdicts)

    with CaptureQueriesContext(connection) as queries:
        note_verdicts(tenant, expected)

    assert len(queries) == 2  # the verdicts' gravest rank per conversation, and one update
    stored = Conversation.objects.filter(tenant=tenant).values_list("pk", "worst_verdict", "worst_verdict_rank")
    assert {pk: (verdict, rank) for pk, verdict, rank in stored} == expected
    assert ("", 99) in expected.values() and len(set(expected.values())) > 2
