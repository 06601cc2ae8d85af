"""The credential detectors, one row each, in the order they run, and `redact`, which applies them.

A masked key keeps its public prefix (so a reader can tell a GitHub token from an OpenAI key) and nothing of its
secret part. A new credential shape is one `Detector` row here (or one entry of `PREFIXES` for a provider key that
starts with a public prefix) plus its example in tests/masking/shapes.py, which the tests require.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from masking.tenant_patterns import Pattern

MASK = "***"

# Provider API keys by their public prefix, as regex fragments. `_PREFIXED` and its hint are both built from this.
PREFIXES = (
    r"sk-",  # OpenAI-style (also Anthropic sk-ant-)
    r"[sr]k_(?:live|test)_",  # Stripe secret and restricted keys
    r"gh[pousr]_",  # GitHub tokens
    r"github_pat_",  # GitHub fine-grained tokens
    r"glpat-",  # GitLab
    r"xox[abprs]-",  # Slack
    r"xapp-",  # Slack app-level tokens
    r"AIza",  # Google
    r"npm_",  # npm
)
_PREFIX = "|".join(PREFIXES)

_CREDENTIAL_KEY = (
    r"[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|credentials?|auth"
    r"|api[_\-]?key|apikey|(?:access|secret|private|signing|encryption|master|client)[_\-]?key)"
)

# Shared by the three rows that look for a credential named in the text: checked once for all three.
_CREDENTIAL_HINT = re.compile(r"(?i)bearer|basic|token|pass|pwd|secret|credential|auth|key")

Replace = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True)
class Detector:
    """One credential shape: `pattern` is applied (with `replace`) only when `hint` occurs in the text.

    `hint` is a literal substring or a cheap regex that every match of `pattern` contains: most messages hold
    no credential, and the full patterns cost far more than the hint.
    """

    name: str
    hint: str | re.Pattern[str]
    pattern: re.Pattern[str]
    replace: Replace


def _mask_group(match: re.Match[str]) -> str:
    """The match with its `secret` group replaced by the mask (the rest of the match is public)."""
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


_PEM = re.compile(
    r"(-----BEGIN (?P<kind>[A-Z0-9 ]*?)PRIVATE KEY-----).*?(?:-----END (?P=kind)PRIVATE KEY-----|\Z)", re.DOTALL
)

# Prefixed keys: the prefix is public, what follows is the secret.
_PREFIXED = re.compile(rf"(?<![A-Za-z0-9])(?P<prefix>{_PREFIX})(?P<secret>[A-Za-z0-9_\-]{{12,}})")

# `scheme://user:password@host`: the password goes, the user and host stay.
_URL_USERINFO = re.compile(r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*:)(?P<secret>[^\s/@]+)@")

# A JWT: header.payload.signature, each base64url; the header always starts `eyJ`.
_JWT = re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]+")

# AWS access key ids: the 4-letter kind is public, the 16 characters after it are not.
_AWS_KEY = re.compile(r"(?<![A-Z0-9])(?P<prefix>AKIA|ASIA|AGPA|AIDA|AROA)(?P<secret>[A-Z0-9]{16})(?![A-Z0-9])")

_AUTHORIZATION = re.compile(r"(?i)\b(?P<keep>(?:bearer|basic|token)\s+)(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)")

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

# The table, in the order the rows run. The literal hints are substrings every match contains.
DETECTORS: tuple[Detector, ...] = (
    Detector("pem private key", "PRIVATE KEY-----", _PEM, _mask_pem),
    Detector("prefixed key", re.compile(_PREFIX), _PREFIXED, _mask_group),
    Detector("url userinfo", "://", _URL_USERINFO, _mask_group),
    Detector("jwt", "eyJ", _JWT, MASK),
    Detector("aws access key id", "A", _AWS_KEY, _mask_group),
    Detector("authorization value", _CREDENTIAL_HINT, _AUTHORIZATION, _mask_group),
    Detector("quoted assignment", _CREDENTIAL_HINT, _QUOTED_ASSIGNMENT, _mask_group),
    Detector("bare assignment", _CREDENTIAL_HINT, _BARE_ASSIGNMENT, _mask_group),
)


def _occurs(hint: str | re.Pattern[str], text: str) -> bool:
    return hint in text if isinstance(hint, str) else hint.search(text) is not None


def redact(text: str, extra: Sequence[Pattern] = ()) -> str:
    """`text` with every credential the detectors (and `extra` tenant patterns) recognise replaced by `***`."""
    if not text:
        return text
    hint: str | re.Pattern[str] | None = None
    present = False
    for detector in DETECTORS:
        # Consecutive rows sharing one hint check it once, on the text as it stood before the first of them.
        if detector.hint is not hint:
            hint = detector.hint
            present = _occurs(hint, text)
        if present:
            text = detector.pattern.sub(detector.replace, text)
    for pattern in extra:
        text = pattern.sub(MASK, text)
    return text
