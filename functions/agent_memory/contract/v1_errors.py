"""The contract's error body (v1): what every 4xx and 5xx answers with.

`handlers/api.py` maps each error to it; the client reads it back into typed errors
(`agent_memory.client.api_errors`). Importable from `agent_memory.contract.v1` too.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorDetail(BaseModel):
    loc: list[str | int] = Field(default_factory=list)
    msg: str
    type: str


class ErrorBody(BaseModel):
    code: str
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)


class ErrorResponse(BaseModel):
    error: ErrorBody
