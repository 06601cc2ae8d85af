"""sessions_app's name for the refused-input exception, defined in the pure top-level `input_errors` package so that
search_app can subclass it without importing sessions_app."""

from input_errors import RejectedInput

__all__ = ["RejectedInput"]
