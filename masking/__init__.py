"""Mask credentials in text before it leaves the server: search snippets and the index, transcripts, exports,
admin forms and every log line use this one package. Pure (no Django), so both apps can import it.

What is masked (masking/detectors.py, one row per shape, all on RE2 in linear time): provider API keys by their
prefixes (`sk-`, Stripe-style `sk_live_`/`rk_live_`/`sk_test_`, `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`, `github_pat_`,
GitLab `glpat-`, Slack `xox[abeprs]-`/`xapp-`, `AIza`, Google OAuth `ya29.`/`1//0`, `npm_`), AWS access key ids and
secret access keys, Azure connection-string keys and SAS signatures, JWTs, webhook URLs (Slack, Discord, Teams), the
password of a URL's userinfo (`postgres://user:***@host`), bearer/basic authorization values, assignments whose key
names a credential (`password=`, `API_TOKEN: …`, `"secret": "…"`, `"pin_password": 1234`, `--api-key …`), a
credential-named JSON object or list at any depth, a label whose value is on the next line (or, through
`redact_adjacent`, in the next message part), PEM private key blocks, and anything matching one of the tenant's
own patterns (masking/tenant_patterns.py, run on RE2).
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
