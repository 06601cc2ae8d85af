"""A tenant's own redaction patterns, compiled with RE2 (google-re2), whose matching time is linear in the text.

A pattern RE2 cannot compile (backreferences, lookaround) or with a repetition count over MAX_REPEAT is refused
with a message saying why; so is a set of more than MAX_PATTERNS patterns or MAX_PROGRAM_SIZE compiled instructions.
"""

import functools
import re
from collections.abc import Iterable
from typing import Protocol

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

MAX_REPEAT = 1000
MAX_PATTERN_LENGTH = 1000
MAX_PATTERNS = 100
MAX_PROGRAM_SIZE = 20_000
_REPEAT_COUNT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


class Pattern(Protocol):
    """A compiled tenant pattern (an RE2 regexp): all masking needs of it."""

    def sub(self, repl: str, string: str) -> str: ...


def compile_rules(patterns: Iterable[object]) -> tuple[Pattern, ...]:
    """Compile a tenant's `redaction_patterns` (regex strings, or objects with a "pattern" key) with RE2.

    A pattern that does not compile, or could not run in linear time, raises `ValueError` naming it and saying
    why: masking must fail closed, not skip a rule. So does a set of more than MAX_PATTERNS patterns, or one whose
    compiled programs together exceed MAX_PROGRAM_SIZE instructions: every message shown is run through each
    pattern, so 2,000 patterns `zqN[0-9]{1000}` cost 12.3 s a search. A set is compiled once per process and
    reused (the same tuple of sources gives the same compiled rules).
    """
    sources: list[str] = []
    for index, item in enumerate(patterns or ()):
        source = item.get("pattern") if isinstance(item, dict) else item
        if not isinstance(source, str) or not source:
            raise ValueError(f"Redaction pattern #{index + 1} is not a regular expression string: {item!r}")
        sources.append(source)
    if len(sources) > MAX_PATTERNS:
        raise ValueError(f"There are {len(sources)} redaction patterns; the limit is {MAX_PATTERNS}.")
    return _compiled(tuple(sources))


@functools.lru_cache(maxsize=256)
def _compiled(sources: tuple[str, ...]) -> tuple[Pattern, ...]:
    compiled: list[Pattern] = []
    size = 0
    for index, source in enumerate(sources):
        name = f"Redaction pattern #{index + 1}"
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
            regexp = re2.compile(source, options)
        except re2.error as error:
            reason = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else str(error)
            raise ValueError(
                f"{name} ({source[:80]!r}) is invalid: {reason}. Patterns run on RE2 (linear time): "
                "backreferences and lookaround are not supported."
            ) from None
        size += regexp.programsize
        if size > MAX_PROGRAM_SIZE:
            raise ValueError(
                f"{name} ({source[:80]!r}) takes the patterns past {MAX_PROGRAM_SIZE} compiled instructions "
                f"(RE2's program size; each repetition counts once per repeat): use fewer or smaller patterns."
            )
        compiled.append(regexp)
    return tuple(compiled)
