"""Loaded with `-p tests.testenv` before Django's settings: the suite's environment.

DEBUG is off by default in production and in tests alike; the test run supplies a SECRET_KEY and plain-HTTP
cookies and hosts (the test client and the browser tests speak HTTP to localhost).
"""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("SECURE_COOKIES", "false")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
