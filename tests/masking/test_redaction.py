"""Credential masking: what the rules catch, what they leave alone, and tenant patterns."""

import unittest

from masking import compile_rules, redact


class RedactionTest(unittest.TestCase):
    def assertMasked(self, text: str, secret: str, expected: str) -> None:
        masked = redact(text)
        self.assertNotIn(secret, masked)
        self.assertEqual(masked, expected)

    def test_provider_keys_keep_their_prefix_and_lose_the_secret(self):
        cases = {
            "sk-proj-Abc123def456ghi789jkl": "sk-***",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "ghp_***",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop": "github_pat_***",
            "xoxb-123456789012-abcdefghijkl": "xoxb-***",
            "AIzaSyD-abcdefghijklmnopqrstuvwxyz12345": "AIza***",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789": "npm_***",
        }
        for secret, shown in cases.items():
            with self.subTest(secret=secret):
                self.assertMasked(f"use {secret} here", secret, f"use {shown} here")

    def test_bearer_tokens_are_masked(self):
        self.assertMasked(
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
            "eyJhbGciOiJIUzI1NiJ9",
            "Authorization: Bearer ***",
        )

    def test_assignments_naming_a_credential_are_masked(self):
        self.assertMasked("export PASSWORD=hunter2 && go", "hunter2", "export PASSWORD=*** && go")
        self.assertMasked("token=abc123def", "abc123def", "token=***")
        self.assertMasked("GITHUB_TOKEN: zzz-top", "zzz-top", "GITHUB_TOKEN: ***")
        self.assertMasked('{"client_secret": "two words"}', "two words", '{"client_secret": "***"}')
        self.assertMasked("secret = 'x1y2z3'", "x1y2z3", "secret = '***'")
        self.assertMasked("curl --api-key k3y-value", "k3y-value", "curl --api-key ***")

    def test_pem_private_keys_are_masked_whole(self):
        pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nline2\n-----END RSA PRIVATE KEY-----"
        self.assertMasked(
            f"key:\n{pem}\nend",
            "MIIEowIBAAKCAQEA",
            "key:\n-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----\nend",
        )

    def test_a_pem_block_cut_off_before_its_end_is_masked_to_the_end(self):
        masked = redact("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B")
        self.assertNotIn("MIIEvQIBADANBgkqhkiG9w0B", masked)

    def test_ordinary_text_is_left_alone(self):
        text = "max_tokens=500, the token budget, ask-me later, sk-learn, password reset flow"
        self.assertEqual(redact(text), text)

    def test_tenant_patterns_mask_their_matches(self):
        rules = compile_rules([r"ACME-\d{6}", {"pattern": r"cust_[a-z]+"}])
        self.assertEqual(redact("ticket ACME-123456 for cust_bob", rules), "ticket *** for ***")

    def test_an_invalid_tenant_pattern_is_an_error_naming_it(self):
        with self.assertRaisesRegex(ValueError, r"#2 \('\(unclosed'\) is invalid"):
            compile_rules([r"ok", "(unclosed"])
        with self.assertRaisesRegex(ValueError, "#1 is not a regular expression"):
            compile_rules([42])
