"""Mask credentials in text before it leaves the server. Pure; search snippets and transcripts both use it.

What is masked: provider API keys by their prefixes (`sk-`, `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`,
`github_pat_`, `xox[baprs]-`, `AIza`, `npm_`), bearer/basic authorization values, assignments whose key names a
credential (`password=`, `API_TOKEN: …`, `"secret": "…"`, `--api-key …`), PEM private key blocks, and anything
matching one of the tenant's own patterns. A masked key keeps its public prefix (so a reader can tell a GitHub
token from an OpenAI key) and nothing of its secret part.
"""

import re
from collections.abc import Iterable, Sequence

MASK = "***"

_PEM = re.compile(
    r"(-----BEGIN (?P<kind>[A-Z0-9 ]*?)PRIVATE KEY-----).*?(?:-----END (?P=kind)PRIVATE KEY-----|\Z)",
    re.DOTALL,
)

# Prefixed keys: the prefix is public, what follows is the secret.
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])(?P<prefix>sk-|gh[pousr]_|github_pat_|xox[baprs]-|AIza|npm_)"
    r"(?P<secret>[A-Za-z0-9_\-]{12,})"
)

_AUTHORIZATION = re.compile(r"(?i)\b(?P<keep>(?:bearer|basic|token)\s+)(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)")

_CREDENTIAL_KEY = (
    r"[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|credentials?|auth"
    r"|api[_\-]?key|apikey|(?:access|secret|private|signing|encryption|master|client)[_\-]?key)"
)

# `"password": "hunter2"`, `token='abc'`, `SECRET = "x y"`: a quoted value, masked whole.
_QUOTED_ASSIGNMENT = re.compile(
    rf"(?i)(?P<keep>(?<![A-Za-z0-9])[\"']?{_CREDENTIAL_KEY}[\"']?\s*[:=]\s*(?P<quote>[\"']))"
    r"(?P<secret>[^\"'\n]+)(?P=quote)"
)

# `password=hunter2`, `GITHUB_TOKEN: abc`, `--api-key abc`, `--token=abc`: an unquoted value up to a delimiter.
_BARE_ASSIGNMENT = re.compile(
    rf"(?i)(?P<keep>(?<![A-Za-z0-9])(?:{_CREDENTIAL_KEY}\s*[:=]\s*|--{_CREDENTIAL_KEY}(?:=|\s+)))"
    r"(?P<secret>[^\s\"',;&}\]\)]+)"
)


_PREFIX_HINT = re.compile(r"sk-|gh[pousr]_|github_pat_|xox[baprs]-|AIza|npm_")
_CREDENTIAL_HINT = re.compile(r"(?i)bearer|basic|token|pass|pwd|secret|credential|auth|key")


def _mask_group(match: re.Match[str]) -> str:
    whole: str = match.group(0)
    start, end = match.span("secret")
    offset = match.start()
    secret = whole[start - offset : end - offset]
    if not secret or secret == MASK:
        return whole
    return whole[: start - offset] + MASK + whole[end - offset :]


def _mask_pem(match: re.Match[str]) -> str:
    kind = match.group("kind")
    return f"{match.group(1)}{MASK}-----END {kind}PRIVATE KEY-----"


def compile_rules(patterns: Iterable[object]) -> tuple[re.Pattern[str], ...]:
    """Compile a tenant's `redaction_patterns` (regex strings, or objects with a "pattern" key).

    A pattern that does not compile raises `ValueError` naming it: masking must fail closed, not skip a rule.
    """
    compiled: list[re.Pattern[str]] = []
    for index, item in enumerate(patterns or ()):
        source = item.get("pattern") if isinstance(item, dict) else item
        if not isinstance(source, str) or not source:
            raise ValueError(f"Redaction pattern #{index + 1} is not a regular expression string: {item!r}")
        try:
            compiled.append(re.compile(source))
        except re.error as error:
            raise ValueError(f"Redaction pattern #{index + 1} ({source!r}) is invalid: {error}") from None
    return tuple(compiled)


def redact(text: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """`text` with every credential the rules (and `extra` tenant patterns) recognise replaced by `***`."""
    if not text:
        return text
    # Cheap literal checks first: most messages hold no credential, and the full patterns cost far more.
    if "PRIVATE KEY-----" in text:
        text = _PEM.sub(_mask_pem, text)
    if _PREFIX_HINT.search(text):
        text = _PREFIXED.sub(_mask_group, text)
    if _CREDENTIAL_HINT.search(text):
        text = _AUTHORIZATION.sub(_mask_group, text)
        text = _QUOTED_ASSIGNMENT.sub(_mask_group, text)
        text = _BARE_ASSIGNMENT.sub(_mask_group, text)
    for pattern in extra:
        text = pattern.sub(MASK, text)
    return text
