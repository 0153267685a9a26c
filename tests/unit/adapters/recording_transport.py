"""A scripted `Transport` for the OpenAI-compatible adapters: it records every request and
answers from a list, so tests see exactly what would have gone over the wire, without a socket."""

from __future__ import annotations

import json
from typing import Any

from agent_memory.adapters.openai_http import HttpRequest, HttpResponse, OpenAICompatibleClient

ENDPOINT = "https://llm.example.com/v1"
HOST = "llm.example.com"
KEY = "sk-tenant-secret-5f2c9a"


def ok(payload: dict[str, Any]) -> HttpResponse:
    return HttpResponse(200, json.dumps(payload).encode())


def status(code: int, body: str = "") -> HttpResponse:
    return HttpResponse(code, body.encode())


class RecordingTransport:
    """Answers each request with the next scripted response (or raises it, if it is an exception)."""

    def __init__(self, *answers: HttpResponse | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[HttpRequest] = []

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError("the transport was called more often than scripted")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies sent, in order."""
        return [json.loads(r.body) for r in self.requests]


class Sleeps(list[float]):
    """A `sleep` that records the delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(
    transport: RecordingTransport, sleeps: Sleeps | None = None, **kwargs: Any
) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        ENDPOINT, KEY, transport=transport, sleep=sleeps if sleeps is not None else Sleeps(), **kwargs
    )
