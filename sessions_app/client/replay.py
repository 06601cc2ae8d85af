"""Resuming an agent from Sessiondesk, guarded by the replay audit. Runs in the agent's process: no Django.

    replay = SessiondeskReplayClient("https://desk.example.com", api_key="sdk_s_…")
    try:
        history = replay.load_history_for_replay("c-42", principal=current_user_id)
    except NotReadyForReplay as refused:
        ...  # refused.verdict, refused.findings (each with its "guidance")
    else:
        agent.run_sync(prompt, message_history=history)

The server answers from the conversation's latest run: the recovered history when its audit (run afresh for
this principal) says READY, otherwise the gravest verdict and every finding with what to do next.
"""

from typing import Any
from urllib.parse import quote

import httpx
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter


class ReplayRequestError(RuntimeError):
    """The request itself was refused (bad principal, unknown conversation, missing key); the API's message."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"{status_code} {message}")
        self.status_code = status_code


class NotReadyForReplay(Exception):
    """The history exists but is not fit to resume from: the audit's verdict and findings, with guidance."""

    def __init__(self, conversation_id: str, verdict: str, findings: list[dict[str, Any]], run_id: str = "") -> None:
        self.conversation_id = conversation_id
        self.run_id = run_id
        self.verdict = verdict
        self.findings = findings
        lines = [f"Conversation '{conversation_id}' is not ready for replay: {verdict}."]
        for finding in findings:
            lines.append(f"- {finding.get('code')}: {finding.get('detail')} Next: {finding.get('guidance')}")
        super().__init__("\n".join(lines))

    @property
    def guidance(self) -> list[str]:
        return [finding.get("guidance", "") for finding in self.findings]


class SessiondeskReplayClient:
    """GET /api/v1/conversations/<id>/replay with a tenant API key (`Authorization: Bearer`)."""

    def __init__(self, base_url: str, api_key: str, *, client: httpx.Client | None = None, timeout: float = 10.0):
        self._client = client or httpx.Client(timeout=timeout)
        self._base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}

    def load_history_for_replay(self, conversation_id: str, principal: str | None = None) -> list[ModelMessage]:
        """The messages to pass as `message_history`, or NotReadyForReplay carrying the verdict and findings."""
        params = {"principal": principal} if principal is not None else {}
        response = self._client.get(
            f"{self._base_url}/api/v1/conversations/{quote(conversation_id, safe='')}/replay",
            params=params,
            headers=self._headers,
        )
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code == 200:
            return ModelMessagesTypeAdapter.validate_python(body["messages"])
        if response.status_code == 409:
            raise NotReadyForReplay(
                conversation_id, body.get("verdict", ""), body.get("findings", []), body.get("run_id", "")
            )
        raise ReplayRequestError(response.status_code, body.get("error", response.text))

    def close(self) -> None:
        self._client.close()


def load_history_for_replay(
    base_url: str, api_key: str, conversation_id: str, principal: str | None = None
) -> list[ModelMessage]:
    """One-off form of `SessiondeskReplayClient.load_history_for_replay`."""
    replay = SessiondeskReplayClient(base_url, api_key)
    try:
        return replay.load_history_for_replay(conversation_id, principal=principal)
    finally:
        replay.close()
