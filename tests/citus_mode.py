"""`make test-citus`: the suite's database is a Citus coordinator's, distributed by tenant once migrated.

Four shards over the two workers: every placement question a test asks (one shard, a move) is answered as with 32,
and the test database is made in a fraction of the time.
"""

import os

CITUS_TESTS = os.environ.get("SESSIONDESK_CITUS_TESTS") == "1"
CITUS_TEST_SHARDS = 4
