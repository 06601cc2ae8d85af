"""The credential mask applied to every message text the dashboard shows, with the tenant's own patterns.

The masking rules are the `masking` package's (one set of rules for snippets, transcripts and exports); this
module only binds them to a tenant.
"""

from collections.abc import Callable

import masking
from sessions_app.models import Tenant


def masker_for(tenant: Tenant) -> Callable[[str], str]:
    rules = masking.compile_rules(tenant.redaction_patterns or [])
    return lambda text: masking.redact(text, rules)
