"""The input models' configuration, shared by every module of the contract."""

from __future__ import annotations

from pydantic import ConfigDict

#: Strict input: a misspelt field is a 400, never silently ignored.
STRICT = ConfigDict(extra="forbid", str_strip_whitespace=False)
