"""Loaded with `-p tests.testenv` before Django's settings: the suite's environment.

DEBUG is off by default in production and in tests alike; the test run supplies a SECRET_KEY and plain-HTTP
cookies and hosts (the test client and the browser tests speak HTTP to localhost).
"""

import os
import tempfile

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("SECURE_COOKIES", "false")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
# Never the checkout's own staticfiles/: once `manage.py serve` has collected a manifest there, pages would name
# hashed files that the live server's static handler cannot find, and a checkout would test unlike a fresh clone.
os.environ.setdefault("STATIC_ROOT", os.path.join(tempfile.gettempdir(), f"sessiondesk-test-static-{os.getpid()}"))
os.makedirs(os.environ["STATIC_ROOT"], exist_ok=True)

# No test is timed (speed targets live in bench/): Hypothesis's per-example deadline is a wall-clock assertion that
# fails on a loaded 2-core machine or on the Citus cluster (a 262 ms example against the default 200 ms).
from hypothesis import settings as hypothesis_settings  # noqa: E402 - after the environment above, on purpose

hypothesis_settings.register_profile("sessiondesk", deadline=None)
hypothesis_settings.load_profile("sessiondesk")
