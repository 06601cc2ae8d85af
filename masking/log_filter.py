"""A logging filter that masks credentials in every record (message, arguments and traceback text)."""

import logging

from masking.detectors import redact


class RedactingFilter(logging.Filter):
    """Rewrites each record in place with its message, arguments and traceback masked; drops no record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info:
            formatter = logging.Formatter()
            record.exc_text = redact(formatter.formatException(record.exc_info))
            record.exc_info = None
        return True
