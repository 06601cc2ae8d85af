"""A tenant's own redaction patterns, compiled with RE2 (google-re2), whose matching time is linear in the text.

A pattern RE2 cannot compile (backreferences, lookaround) or with a repetition count over MAX_REPEAT is refused
with a message saying why.
"""

import re
from collections.abc import Iterable
from typing import Protocol

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

MAX_REPEAT = 1000
MAX_PATTERN_LENGTH = 1000
_REPEAT_COUNT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


class Pattern(Protocol):
    """A compiled tenant pattern (an RE2 regexp): all masking needs of it."""

    def sub(self, repl: str, string: str) -> str: ...


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
