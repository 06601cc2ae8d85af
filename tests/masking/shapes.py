"""One example of each credential shape the detectors know, with the part that must never leave the server.

A new detector row, or a new entry of `PREFIXES`, needs its shape here: tests/masking/test_detectors.py fails
until every row and every prefix has one, and the dashboard test sends each shape through every page and export.
"""

from typing import NamedTuple


class Shape(NamedTuple):
    name: str
    detector: str  # the `Detector.name` that masks it
    text: str
    secret: str


SHAPES = (
    Shape("openai", "prefixed key", "sk-proj-Abc123def456ghi789jkl", "proj-Abc123def456ghi789jkl"),
    Shape("stripe", "prefixed key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    Shape("stripe restricted", "prefixed key", "rk_live_51HxyzABCDEF0123456789ab", "51HxyzABCDEF0123456789ab"),
    Shape("github", "prefixed key", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
    Shape(
        "github fine-grained",
        "prefixed key",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "11ABCDEFG0123456789_abcdefghijklmnop",
    ),
    Shape("gitlab", "prefixed key", "glpat-xxYYzz0123456789abcd", "xxYYzz0123456789abcd"),
    Shape("slack", "prefixed key", "xoxb-123456789012-abcdefghijkl", "123456789012-abcdefghijkl"),
    Shape("slack app", "prefixed key", "xapp-1-A0123456789-1234567890123-abcdef", "1-A0123456789-1234567890123-abcdef"),
    Shape("google", "prefixed key", "AIzaSyD-abcdefghijklmnopqrstuvwxyz12345", "SyD-abcdefghijklmnopqrstuvwxyz12345"),
    Shape("npm", "prefixed key", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
    Shape("aws", "aws access key id", "AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    Shape(
        "jwt",
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    Shape("url userinfo", "url userinfo", "postgres://app:s3cretPassw0rd@db.internal:5432/prod", "s3cretPassw0rd"),
    Shape(
        "pem",
        "pem private key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzzz\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAK",
    ),
    Shape("bearer", "authorization value", "Authorization: Bearer Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4"),
    Shape("quoted secret", "quoted assignment", '{"client_secret": "two words here"}', "two words here"),
    Shape("password assignment", "bare assignment", "password=correct-horse-battery", "correct-horse-battery"),
    Shape("secret assignment", "bare assignment", "secret=tr0ub4dor-and-3", "tr0ub4dor-and-3"),
    Shape("token assignment", "bare assignment", "token=abcDEF123456ghi", "abcDEF123456ghi"),
)
