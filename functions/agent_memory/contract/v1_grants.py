"""Models of the HTTP contract (v1) for read grants: which agents may read another's memory."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ReadGrantResponse(BaseModel):
    agent_id: str = Field(description="The agent whose memory is read.")
    reader_id: str = Field(description="The agent whose keys may read it.")
    granted: bool = Field(description="Whether the reader may read it now.")
    changed: bool = Field(description="Whether this call changed that (false: it was so already).")


class ReadersResponse(BaseModel):
    agent_id: str
    readers: list[str] = Field(description="Agents granted read access, sorted.")
