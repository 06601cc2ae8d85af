"""gunicorn's settings for `manage.py serve` (loaded with `--config python:config.gunicorn`).

gunicorn writes a `Server:` header naming itself on every answer and has no setting for it; its response class
reads the module's SERVER when it answers, so the name is replaced here, before any worker serves. The header
stays (HTTP allows any product token), but it names no server software or version an attacker could match.
"""

import gunicorn.http.wsgi

gunicorn.http.wsgi.SERVER = "sessiondesk"

# The request line (method, path and query) may be as long as any query the API takes: `q` alone is up to 4,096
# characters, which percent-encoded can be 12 bytes each, and gunicorn's largest explicit limit is 8,190 bytes (a
# 414 the API never documented, for queries under its own limit). 0 is gunicorn's "unlimited", which its parser
# still holds to 1 MiB; every parameter has its own length limit, answered with a 400 that names it.
limit_request_line = 0
