"""Limits of the HTTP contract, in one place so models, docs and tests agree."""

from __future__ import annotations

MAX_CONTENT_BYTES = 16 * 1024
MAX_ITEMS_PER_REQUEST = 100
MAX_RESULTS = 100
DEFAULT_RESULTS = 10
MAX_QUERY_CHARS = 4_000
MAX_TAGS = 20
MAX_TAG_CHARS = 64
MAX_SPEAKER_CHARS = 64
#: Context a turn is embedded and indexed with: its own words, then at most this much before it.
MAX_CONTEXT_CHARS = 2_000
MAX_TOPIC_CHARS = 256
MAX_LINKS = 50
#: How many older memories one memory may supersede (one per attribute it restates, bounded).
MAX_SUPERSEDES = 20
MAX_METADATA_BYTES = 8 * 1024
MAX_METADATA_DEPTH = 5
MAX_TTL_DAYS = 36_500
MAX_DAYS_AGO = 36_500
MAX_LIST_LIMIT = 100
#: The whole request body; bigger bodies are refused with 413 before they are parsed.
MAX_BODY_BYTES = 2 * 1024 * 1024
#: One message on the write queue (SQS's maximum, 1 MiB): a summary's write names every child.
MAX_MESSAGE_BYTES = 1024 * 1024

#: Token budget of `POST .../context`: default, least and most.
DEFAULT_CONTEXT_TOKENS = 2000
MIN_CONTEXT_TOKENS = 50
MAX_CONTEXT_TOKENS = 32_000
