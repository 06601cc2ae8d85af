"""Mask credentials in text before it leaves the server. Pure; search snippets and transcripts both use it.

What is masked: provider API keys by their prefixes (`sk-`, Stripe-style `sk_live_`/`rk_live_`/`sk_test_`,
`ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`, `github_pat_`, GitLab `glpat-`, Slack `xox[abprs]-`/`xapp-`, `AIza`, `npm_`),
AWS access key ids (`AKIA…`/`ASIA…`), JWTs, the password of a URL's userinfo (`postgres://user:***@host`),
bearer/basic authorization values, assignments whose key names a credential (`password=`, `API_TOKEN: …`,
`"secret": "…"`, `--api-key …`), PEM private key blocks, and anything matching one of the tenant's own patterns.
A masked key keeps its public prefix (so a reader can tell a GitHub token from an OpenAI key) and nothing of its
secret part.

Tenant patterns run on RE2 (google-re2), whose matching time is linear in the text: a pattern RE2 cannot compile
(backreferences, lookaround) or with a repetition count over MAX_REPEAT is refused with a message saying why.
"""

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

MASK = "***"
MAX_REPEAT = 1000
MAX_PATTERN_LENGTH = 1000
_REPEAT_COUNT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


class Pattern(Protocol):
    """A compiled tenant pattern (an RE2 regexp): all masking needs of it."""

    def sub(self, repl: str, string: str) -> str: ...

_PEM = re.compile(
    r"(-----BEGIN (?P<kind>[A-Z0-9 ]*?)PRIVATE KEY-----).*?(?:-----END (?P=kind)PRIVATE KEY-----|\Z)",
    re.DOTALL,
)

# Prefixed keys: the prefix is public, what follows is the secret.
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])(?P<prefix>sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|xapp-|AIza|npm_)"
    r"(?P<secret>[A-Za-z0-9_\-]{12,})"
)

# AWS access key ids: the 4-letter kind is public, the 16 characters after it are not.
_AWS_KEY = re.compile(r"(?<![A-Z0-9])(?P<prefix>AKIA|ASIA|AGPA|AIDA|AROA)(?P<secret>[A-Z0-9]{16})(?![A-Z0-9])")

# A JWT: header.payload.signature, each base64url; the header always starts `eyJ`.
_JWT = re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]+")

# `scheme://user:password@host`: the password goes, the user and host stay.
_URL_USERINFO = re.compile(r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*:)(?P<secret>[^\s/@]+)@")

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


_PREFIX_HINT = re.compile(r"sk-|k_live_|k_test_|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|xapp-|AIza|npm_")
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


def compile_rules(patterns: Iterable[object]) -> tuple[Pattern, ...]:
    """Compile a tenant's `redaction_patterns` (regex strings, or objects with a "pattern" key) with RE2.

    A pattern that does not compile, or could not run in linear time, raises `ValueError` naming it and saying
    why: masking must fail closed, not skip a rule.
    """
    compiled: list[Pattern] = []
    for index, item in enumerate(patterns or ()):
        source = item.get("pattern") if isinstance(item, dict) else item
        name = f"Redaction pattern #{index + 1}"
        if not isinstance(source, str) or not source:
            raise ValueError(f"{name} is not a regular expression string: {item!r}")
        if len(source) > MAX_PATTERN_LENGTH:
            raise ValueError(f"{name} is longer than {MAX_PATTERN_LENGTH} characters.")
        for match in _REPEAT_COUNT.finditer(source):
            counts = [int(group) for group in match.groups() if group]
            if any(count > MAX_REPEAT for count in counts):
                raise ValueError(
                    f"{name} ({source[:80]!r}) repeats {match.group(0)}: repetition counts above {MAX_REPEAT} "
                    "are refused."
                )
        options = re2.Options()
        options.log_errors = False
        try:
            compiled.append(re2.compile(source, options))
        except re2.error as error:
            reason = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else str(error)
            raise ValueError(
                f"{name} ({source[:80]!r}) is invalid: {reason}. Patterns run on RE2 (linear time): "
                "backreferences and lookaround are not supported."
            ) from None
    return tuple(compiled)


def redact(text: str, extra: Sequence[Pattern] = ()) -> str:
    """`text` with every credential the rules (and `extra` tenant patterns) recognise replaced by `***`."""
    if not text:
        return text
    # Cheap literal checks first: most messages hold no credential, and the full patterns cost far more.
    if "PRIVATE KEY-----" in text:
        text = _PEM.sub(_mask_pem, text)
    if _PREFIX_HINT.search(text):
        text = _PREFIXED.sub(_mask_group, text)
    if "://" in text:
        text = _URL_USERINFO.sub(_mask_group, text)
    if "eyJ" in text:
        text = _JWT.sub(MASK, text)
    if "A" in text:
        text = _AWS_KEY.sub(_mask_group, text)
    if _CREDENTIAL_HINT.search(text):
        text = _AUTHORIZATION.sub(_mask_group, text)
        text = _QUOTED_ASSIGNMENT.sub(_mask_group, text)
        text = _BARE_ASSIGNMENT.sub(_mask_group, text)
    for pattern in extra:
        text = pattern.sub(MASK, text)
    return text
