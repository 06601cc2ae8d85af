"""Settings mypy's Django plugin loads: the real ones, with a placeholder SECRET_KEY (DEBUG is off by default
and then SECRET_KEY is required; type checking serves nothing)."""

import os

os.environ.setdefault("SECRET_KEY", "typecheck-only-placeholder")

from config.settings import *  # noqa: F403
