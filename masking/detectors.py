"""The credential detectors, one row each, in the order they run, and `redact`, which applies them.

A masked key keeps its public prefix (so a reader can tell a GitHub token from an OpenAI key) and nothing of its
secret part. A new credential shape is one `Detector` row here (or one entry of `PREFIXES` for a provider key that
starts with a public prefix) plus its example in tests/masking/shapes.py, which the tests require.

Bounded work, by construction: every pattern runs on RE2 (google-re2), whose matching time is linear in the text
(no backtracking), and each compiled program is at most `MAX_PROGRAM_SIZE` RE2 instructions, so one pass of a row
costs at most about `MAX_PROGRAM_SIZE` × the text's length. Python's `re` took 11 s on `key ` + 5,000 dashes and
minutes on `x:// ` + `a.` × 100,000 (a `[…]*` prefix tried again from every position). The one scanner that is not
a regex (the value of a credential-named JSON object or list, masked to its closing bracket) reads at most
`MAX_CONTAINER_SCAN` characters per match and never reads a character twice.
"""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from masking.tenant_patterns import Pattern

MASK = "***"
_MASK = MASK.encode()
MAX_PROGRAM_SIZE = 2000
MAX_CONTAINER_SCAN = 65536
MAX_MATCHES = 4096
"""Matches masked one by one in one text (one message part), over all rows together: each costs the RE2 binding's
Python wrapper about 10 µs, so a part made of nothing but credential-shaped matches (`token=a ` × 125,000 at the
1,000,000-character part cap) took seconds. Past the budget, the rest of the text is masked wholesale."""


class Match(Protocol):
    """What the detectors read of an RE2 match over UTF-8 bytes (its spans are by group number only)."""

    @property
    def string(self) -> bytes: ...
    def group(self, name: int | str = 0) -> bytes | None: ...
    def span(self, group: int = 0) -> tuple[int, int]: ...
    def start(self, group: int = 0) -> int: ...
    def end(self, group: int = 0) -> int: ...


class Regexp(Protocol):
    """A compiled RE2 regexp, as far as the detectors use it."""

    @property
    def programsize(self) -> int: ...
    @property
    def groupindex(self) -> dict[bytes, int]: ...

    def sub(self, repl: bytes | Callable[[Match], bytes], string: bytes) -> bytes: ...
    def search(self, string: bytes) -> Match | None: ...
    def finditer(self, string: bytes) -> Iterator[Match]: ...


def compile_re2(pattern: str) -> Regexp:
    """`pattern` compiled by RE2 to run over UTF-8 bytes: the wrapper's str path re-decodes offsets on every
    match, which made a text of many matches three times slower."""
    options = re2.Options()
    options.log_errors = False
    return cast(Regexp, re2.compile(pattern.encode(), options))


# Provider API keys by their public prefix, as regex fragments. `_PREFIXED` and its hint are both built from this.
PREFIXES = (
    r"sk-",  # OpenAI-style (also Anthropic sk-ant-)
    r"[sr]k_(?:live|test)_",  # Stripe secret and restricted keys
    r"gh[pousr]_",  # GitHub tokens
    r"github_pat_",  # GitHub fine-grained tokens
    r"glpat-",  # GitLab
    r"xox[abeprs]-",  # Slack (xoxe-: refresh tokens)
    r"xapp-",  # Slack app-level tokens
    r"AIza",  # Google API keys
    r"ya29\.",  # Google OAuth access tokens
    r"1//0",  # Google OAuth refresh tokens
    r"npm_",  # npm
)
_PREFIX = "|".join(PREFIXES)

_CREDENTIAL_KEY = (
    r"[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|credentials?|auth"
    r"|api[_\-]?key|apikey|(?:access|secret|private|signing|encryption|master|client|account)[_\-]?key"
    r"|private[_\-]?key[_\-]?id)"
)

# Shared by the rows that look for a credential named in the text: checked once for all of them.
_CREDENTIAL_HINT = compile_re2(r"(?i)bearer|basic|token|pass|pwd|secret|credential|auth|key")

Replace = bytes | Callable[[Match], bytes]


@dataclass(frozen=True)
class Detector:
    """One credential shape: `pattern` is applied (with `replace`) only when `hint` occurs in the text.

    `hint` is a literal substring or a cheap regex that every match of `pattern` contains: most messages hold
    no credential, and the full patterns cost far more than the hint. With `extend`, each match is masked on past
    its end, up to the index `extend(text, match end)` returns (a credential-named JSON container to its close).
    """

    name: str
    hint: bytes | Regexp
    pattern: Regexp
    replace: Replace
    extend: Callable[[bytes, int], int] | None = None

    def apply(self, text: bytes, budget: "Budget | None" = None) -> bytes:
        """`text` (UTF-8) with this row's matches masked, each spending one of `budget` (a fresh one if none);
        once it is spent, the text from the match that found it empty on is masked whole."""
        budget = budget or Budget()
        pieces: list[bytes] = []
        done = 0
        for match in self.pattern.finditer(text):
            if done >= len(text):
                break  # masked to the end
            if budget.left == 0:
                pieces += [text[done : max(done, match.start())], _MASK]
                return b"".join(pieces)
            budget.left -= 1  # a match inside a container already masked costs the wrapper as much
            if match.start() < done:
                continue
            if self.extend is not None:
                pieces += [text[done : match.end()], _MASK]
                done = self.extend(text, match.end())
            else:
                pieces += [text[done : match.start()], self.replace(match) if callable(self.replace) else self.replace]
                done = match.end()
        return b"".join(pieces) + text[done:] if pieces else text


@dataclass
class Budget:
    """The matches one text may still have masked one by one (`MAX_MATCHES` to start)."""

    left: int = MAX_MATCHES

    @property
    def spent(self) -> bool:
        return self.left == 0


def _mask_group(pattern: Regexp) -> Callable[[Match], bytes]:
    """A replacement for `pattern`'s matches: the match with its `secret` group masked (the rest is public).

    Groups are read by number (the RE2 wrapper decodes every group name on each named lookup)."""
    secret_group = pattern.groupindex[b"secret"]

    def mask(match: Match) -> bytes:
        start, end = match.span(0)
        secret_start, secret_end = match.span(secret_group)
        text = match.string
        if secret_start == secret_end or text[secret_start:secret_end] == _MASK:
            return text[start:end]
        return text[start:secret_start] + _MASK + text[secret_end:end]

    return mask


def _mask_quoted(pattern: Regexp) -> Callable[[Match], bytes]:
    """A quoted value masked whole, whichever quote it was in."""
    double, single = pattern.groupindex[b"double"], pattern.groupindex[b"single"]

    def mask(match: Match) -> bytes:
        start = match.span(0)[0]
        value_start, value_end = match.span(double)
        if value_start < 0:
            value_start, value_end = match.span(single)
        return match.string[start:value_start] + _MASK + match.string[value_end : match.span(0)[1]]

    return mask


def _mask_pem(match: Match) -> bytes:
    head, kind = match.group(1) or b"", match.group(2) or b""  # by number: see _mask_group
    return head + _MASK + b"-----END " + kind + b"PRIVATE KEY-----"


_CLOSING = {ord("{"): ord("}"), ord("["): ord("]")}
_QUOTE, _BACKSLASH = ord('"'), ord("\\")


def _container_end(text: bytes, start: int) -> int:
    """The index of the bracket closing the JSON object or list opened at `start - 1` (strings read as strings);
    the end of the text (masked to the end) when it does not close within MAX_CONTAINER_SCAN characters."""
    stack = [_CLOSING[text[start - 1]]]
    in_string = escaped = False
    for index in range(start, min(len(text), start + MAX_CONTAINER_SCAN)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == _BACKSLASH:
                escaped = True
            elif char == _QUOTE:
                in_string = False
        elif char == _QUOTE:
            in_string = True
        elif char in _CLOSING:
            stack.append(_CLOSING[char])
        elif char == stack[-1]:
            stack.pop()
            if not stack:
                return index
    return len(text)


_PEM = compile_re2(
    r"(?s)(?P<head>-----BEGIN (?P<kind>[A-Z0-9 ]*)PRIVATE KEY-----).*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)"
)

# Prefixed keys: the prefix is public, what follows is the secret.
_PREFIXED = compile_re2(rf"\b(?P<prefix>{_PREFIX})(?P<secret>[A-Za-z0-9_\-]{{12,}})")

# `scheme://user:password@host`: the password goes, the user and host stay.
_URL_USERINFO = compile_re2(r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*:)(?P<secret>[^\s/@]+)@")

# Incoming-webhook URLs carry their secret in the path: Slack, Discord, Microsoft Teams (and Office 365).
_WEBHOOK = compile_re2(
    r"(?i)(?P<keep>https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:[a-z0-9\-]+\.)?discord(?:app)?\.com/api/webhooks/"
    r"|[a-z0-9.\-]*webhook\.office\.com/webhookb2/|outlook\.office\.com/webhook/))"
    r"(?P<secret>[A-Za-z0-9_\-/@.%]+)"
)

# A JWT: header.payload.signature, each base64url; the header always starts `eyJ`.
_JWT = compile_re2(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]+")

# AWS access key ids: the 4-letter kind is public, the 16 characters after it are not.
_AWS_KEY = compile_re2(r"\b(?P<prefix>AKIA|ASIA|AGPA|AIDA|AROA)(?P<secret>[A-Z0-9]{16})\b")

# An AWS secret access key (40 base64 characters) named as one, in any of the forms CLIs and files print it.
_AWS_SECRET = compile_re2(
    r"(?i)(?P<keep>aws[A-Za-z0-9_.\-]{0,30}(?:secret|key)[A-Za-z0-9_.\-]{0,30}[\"']?\s*[:=,]?\s*[\"']?)"
    r"(?P<secret>[A-Za-z0-9/+]{40})"
)

# Azure storage and service-bus connection strings (`AccountKey=…;`) and shared access signatures (`&sig=…`).
_AZURE_KEY = compile_re2(
    r"(?i)(?P<keep>\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|PrimaryKey|SecondaryKey)\s*=\s*)"
    r"(?P<secret>[^;\s\"'&]+)"
)
_AZURE_SAS = compile_re2(r"(?P<keep>[?&]sig=)(?P<secret>[A-Za-z0-9%+/=\-_]{8,})")

_AUTHORIZATION = compile_re2(r"(?i)\b(?P<keep>(?:bearer|basic|token)\s+)(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)")

# A credential-named key whose JSON value is an object or a list, at any depth: all of it is masked to its close.
_CONTAINER = compile_re2(rf"(?i)(?P<keep>[\"']{_CREDENTIAL_KEY}[\"']\s*:\s*)[\[{{]")

# `"password": "hunter2"`, `token='abc'`, `SECRET = "x y"`: a quoted value, masked whole.
_QUOTED_ASSIGNMENT = compile_re2(
    rf"(?i)(?P<keep>[\"']?{_CREDENTIAL_KEY}[\"']?\s*[:=]\s*)"
    r"(?:\"(?P<double>(?:[^\"\\\n]|\\.)+)\"|'(?P<single>[^'\n]+)')"
)

# `password:` at the end of a line (or of a message part) and the value on the next: that whole line is masked.
_LABEL_LINE = compile_re2(rf"(?i)(?P<keep>{_CREDENTIAL_KEY}[\"']?[ \t]*[:=][ \t]*\n[ \t]*)(?P<secret>[^\n]+)")

# `password=hunter2`, `GITHUB_TOKEN: abc`, `"pin_password": 1234`, `--api-key abc`, `--token=abc`: an unquoted
# value up to a delimiter.
_BARE_ASSIGNMENT = compile_re2(
    rf"(?i)(?P<keep>(?:{_CREDENTIAL_KEY}[\"']?\s*[:=]\s*|--{_CREDENTIAL_KEY}(?:=|\s+)))"
    r"(?P<secret>[^\s\"',;&{}\[\]\(\)]+)"
)

# The table, in the order the rows run. The literal hints are substrings every match contains.
DETECTORS: tuple[Detector, ...] = (
    Detector("pem private key", b"PRIVATE KEY-----", _PEM, _mask_pem),
    Detector("prefixed key", compile_re2(_PREFIX), _PREFIXED, _mask_group(_PREFIXED)),
    Detector("webhook url", b"://", _WEBHOOK, _mask_group(_WEBHOOK)),
    Detector("url userinfo", b"://", _URL_USERINFO, _mask_group(_URL_USERINFO)),
    Detector("jwt", b"eyJ", _JWT, _MASK),
    Detector("aws access key id", b"A", _AWS_KEY, _mask_group(_AWS_KEY)),
    Detector("aws secret access key", compile_re2("(?i)aws"), _AWS_SECRET, _mask_group(_AWS_SECRET)),
    Detector("azure account key", b"=", _AZURE_KEY, _mask_group(_AZURE_KEY)),
    Detector("azure sas signature", b"sig=", _AZURE_SAS, _mask_group(_AZURE_SAS)),
    Detector("authorization value", _CREDENTIAL_HINT, _AUTHORIZATION, _mask_group(_AUTHORIZATION)),
    Detector("credential container", _CREDENTIAL_HINT, _CONTAINER, b"", _container_end),
    Detector("quoted assignment", _CREDENTIAL_HINT, _QUOTED_ASSIGNMENT, _mask_quoted(_QUOTED_ASSIGNMENT)),
    Detector("credential label line", _CREDENTIAL_HINT, _LABEL_LINE, _mask_group(_LABEL_LINE)),
    Detector("bare assignment", _CREDENTIAL_HINT, _BARE_ASSIGNMENT, _mask_group(_BARE_ASSIGNMENT)),
)

# Text ending in a credential label (`password:`), checked on a message part to mask the first line of the next.
_DANGLING_LABEL = compile_re2(rf"(?i){_CREDENTIAL_KEY}[\"']?[ \t]*[:=]\s*\z")


def _occurs(hint: bytes | Regexp, text: bytes) -> bool:
    return hint in text if isinstance(hint, bytes) else hint.search(text) is not None


def redact(text: str, extra: Sequence[Pattern] = ()) -> str:
    """`text` with every credential the detectors (and `extra` tenant patterns) recognise replaced by `***`."""
    if not text:
        return text
    data = text.encode("utf-8", "surrogatepass")
    hint: bytes | Regexp | None = None
    present = False
    budget = Budget()
    for detector in DETECTORS:
        # Consecutive rows sharing one hint check it once, on the text as it stood before the first of them.
        if detector.hint is not hint:
            hint = detector.hint
            present = _occurs(hint, data)
        if present:
            data = detector.apply(data, budget)
    text = data.decode("utf-8", "surrogatepass")
    for pattern in extra:
        text = pattern.sub(MASK, text)
    return text


def redact_adjacent(texts: Sequence[str], mask: Callable[[str], str]) -> list[str]:
    """Each of a message's part texts through `mask`, and a part that follows one ending in a credential label
    (`['password:', 'hunter2']`) with its first line masked too: the label and its value arrived apart."""
    masked = [mask(text) for text in texts]
    for index in range(1, len(texts)):
        if masked[index] and _DANGLING_LABEL.search(texts[index - 1][-200:].encode()) is not None:
            first, newline, rest = masked[index].partition("\n")
            if first.strip() and first != MASK:
                masked[index] = MASK + newline + rest
    return masked
