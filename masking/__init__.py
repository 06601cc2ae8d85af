"""Mask credentials in text before it leaves the server: search snippets and the index, transcripts, exports,
admin forms and every log line use this one package. Pure (no Django), so both apps can import it.

What is masked (masking/detectors.py, one row per shape): provider API keys by their prefixes (`sk-`, Stripe-style
`sk_live_`/`rk_live_`/`sk_test_`, `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`, `github_pat_`, GitLab `glpat-`, Slack
`xox[abprs]-`/`xapp-`, `AIza`, `npm_`), AWS access key ids (`AKIA…`/`ASIA…`), JWTs, the password of a URL's userinfo
(`postgres://user:***@host`), bearer/basic authorization values, assignments whose key names a credential
(`password=`, `API_TOKEN: …`, `"secret": "…"`, `--api-key …`), PEM private key blocks, and anything matching one of
the tenant's own patterns (masking/tenant_patterns.py, run on RE2).
"""

from masking.detectors import DETECTORS, MASK, PREFIXES, Detector, redact, redact_adjacent
from masking.tenant_patterns import Pattern, compile_rules

__all__ = [
    "DETECTORS",
    "MASK",
    "PREFIXES",
    "Detector",
    "Pattern",
    "compile_rules",
    "redact",
    "redact_adjacent",
]
