"""Each conversation's document id range in its statistics row, so that conversation scope is ranked from blocks.

Conversation scope reads the posting blocks overlapping the conversation's documents; the range comes with the
statistics (one row by primary key). Taken from the documents instead, a 10,000-message conversation's min and
max ids cost 9 to 22 ms on PostgreSQL (the (tenant, conversation, position) index does not hold the id: one heap
read per document), more than the whole search may take. The backfill reads the documents once, grouped by
conversation (UPDATE ... FROM: SQLite 3.33 or later). Adding a nullable column needs no rewrite on any of the
databases (ConversationIndex is not partitioned; on Citus the ALTER is propagated to the shards, and the UPDATE names
the tenant on both tables so it runs shard by shard: run on a distributed database with data, the backfilled ranges
equalled those the writes had kept).
"""

from django.db import migrations, models

BACKFILL = """
UPDATE search_app_conversationindex SET first_document = r.low, last_document = r.high
FROM (SELECT tenant_id, conversation_id, min(id) AS low, max(id) AS high FROM search_app_searchdocument
      GROUP BY tenant_id, conversation_id) AS r
WHERE search_app_conversationindex.tenant_id = r.tenant_id
AND search_app_conversationindex.conversation_id = r.conversation_id
"""


class Migration(migrations.Migration):
    dependencies = [("search_app", "0007_citus_row_triggers")]

    operations = [
        migrations.AddField(
            model_name="conversationindex",
            name="first_document",
            field=models.BigIntegerField(
                blank=True,
                help_text="At most the lowest id of the conversation's documents; null if unknown.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="conversationindex",
            name="last_document",
            field=models.BigIntegerField(
                blank=True,
                help_text="At least the highest id of the conversation's documents; null if unknown.",
                null=True,
            ),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
