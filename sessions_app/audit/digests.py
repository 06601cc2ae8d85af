"""The one-way digests the audit keeps instead of content: tool-call ids, prompts and resume tokens.

Pure. Plain SHA-256 (no tenant salt) on purpose: an operator holding a tool-call id or a prompt file can hash
it and find the matching audit record, while the record itself reveals neither.
"""

import hashlib


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def hash_tool_call_id(tool_call_id: str) -> str:
    return sha256_hex(f"tool-call:{tool_call_id}")


def hash_resume_token(token: str) -> str:
    return sha256_hex(f"resume-token:{token}")


def prompt_sha256(prompt_text: str) -> str:
    """The prompt-contract hash of a system prompt or static instructions.

    Surrounding whitespace is ignored so a prompt kept in a file (which usually ends in a newline) hashes the
    same as the string the agent was built with.
    """
    return sha256_hex(prompt_text.strip())
