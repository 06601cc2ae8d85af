"""One example of each credential shape the detectors know, with the part that must never leave the server.

A new detector row, or a new entry of `PREFIXES`, needs its shape here: tests/masking/test_detectors.py fails
until every row and every prefix has one, and the dashboard test sends each shape through every page and export.
"""

from typing import NamedTuple

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart


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
    Shape(
        "azure connection string",
        "azure account key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2"
        "UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2",
    ),
    Shape(
        "azure sas",
        "azure sas signature",
        "https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&se=2026-01-01&sig=q9Xw2YbZ0aLc%2BsPe7Rt%3D",
        "q9Xw2YbZ0aLc",
    ),
    Shape(
        "google oauth access", "prefixed key", "ya29.a0AfH6SMBx-abcdefghijklmnopqrstuvwxyz0123", "a0AfH6SMBx-abcdefghij"
    ),
    Shape("google oauth refresh", "prefixed key", "1//0gDefGhiJklMnoPqrStuVwxYzAbc", "gDefGhiJklMnoPqrStu"),
    Shape(
        "slack webhook",
        "webhook url",
        "https://hooks.slack.com/services/T024BE7LD/B01ABCDEF/abcdEFGHijklMNOPqrstUVWX",
        "abcdEFGHijklMNOPqrstUVWX",
    ),
    Shape(
        "discord webhook",
        "webhook url",
        "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789",
        "AbCdEfGhIjKlMnOpQrStUvWxYz",
    ),
    Shape(
        "teams webhook",
        "webhook url",
        "https://acme.webhook.office.com/webhookb2/1a2b3c4d-0000-1111-2222-333344445555@9f8e7d6c-aaaa-bbbb-cccc-"
        "ddddeeeeffff/IncomingWebhook/0123456789abcdef0123456789abcdef/4d3c2b1a-1111-2222-3333-444455556666",
        "0123456789abcdef0123456789abcdef",
    ),
    Shape(
        "aws secret access key",
        "aws secret access key",
        "aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG",
    ),
    Shape(
        "gcp service account key",
        "pem private key",
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC'
        '\\n-----END PRIVATE KEY-----\\n"}',
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    Shape(
        "gcp private key id",
        "quoted assignment",
        '{"private_key_id": "8f0c3e2b1a9d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"}',
        "8f0c3e2b1a9d7c6b5a4f3e2d1c0b9a8f7e6d5c4b",
    ),
    Shape("oauth access token", "quoted assignment", '{"access_token": "at-9Zq8Yp7Xo6Wn"}', "at-9Zq8Yp7Xo6Wn"),
    Shape("oauth refresh token", "quoted assignment", '{"refresh_token":"rt-5678ijklMNOP"}', "rt-5678ijklMNOP"),
    Shape(
        "oauth token in a url",
        "bare assignment",
        "https://graph.example.com/me?access_token=EAAGm0PX4ZCpsBA&fields=id",
        "EAAGm0PX4ZCpsBA",
    ),
    Shape("numeric json password", "bare assignment", '{"account":"acme","pin_password":918273645}', "918273645"),
    Shape(
        "credential object",
        "credential container",
        '{"credentials": {"user": "deploy", "pass": "Tr1cky-Pa55", "nested": [{"x": "]"}]}, "ok": true}',
        "Tr1cky-Pa55",
    ),
    Shape("label then value", "credential label line", "password:\nopen sesame 42", "open sesame 42"),
)


class MessageShape(NamedTuple):
    """A credential carried by a message's structure rather than one text: split across parts, inside a tool
    return whose content is a list, or a tool argument at some depth."""

    name: str
    message: ModelMessage
    secret: str


MESSAGE_SHAPES = (
    MessageShape(
        "password split across prompt items",
        ModelRequest(parts=[UserPromptPart(content=["password:", "hunter2-split-value"])]),
        "hunter2-split-value",
    ),
    MessageShape(
        "password split across two parts",
        ModelRequest(parts=[UserPromptPart(content="my password ="), UserPromptPart(content="split-parts-99 ok")]),
        "split-parts-99",
    ),
    MessageShape(
        "key in a list tool return",
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name="vault",
                    content=["the key follows", {"api_key": "list-held-key-7788"}, "sk-proj-ListContent0123456789"],
                    tool_call_id="call-list",
                )
            ]
        ),
        "list-held-key-7788",
    ),
    MessageShape(
        "provider key in a list tool return",
        ModelRequest(
            parts=[ToolReturnPart(tool_name="vault", content=["sk-proj-ListContent0123456789"], tool_call_id="c-l2")]
        ),
        "ListContent0123456789",
    ),
    MessageShape(
        "numeric pin_password argument",
        ModelResponse(
            parts=[ToolCallPart(tool_name="bank", args={"account": "x", "pin_password": 918273645}, tool_call_id="c-p")]
        ),
        "918273645",
    ),
    MessageShape(
        "password deep in arguments",
        ModelResponse(
            parts=[
                ToolCallPart(
                    tool_name="deploy",
                    args={"config": {"db": {"auth": {"password": "deep-nested-pw-55"}}}},
                    tool_call_id="c-deep",
                )
            ]
        ),
        "deep-nested-pw-55",
    ),
    MessageShape(
        "credentials object deep in a tool return",
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name="inventory",
                    content={"result": {"items": [{"name": "db", "credentials": {"pass": "obj-held-77", "n": 5}}]}},
                    tool_call_id="c-obj",
                )
            ]
        ),
        "obj-held-77",
    ),
)
