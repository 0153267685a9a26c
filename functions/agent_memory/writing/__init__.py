"""Writing: a write accepted, queued, and stored as a record (embed, dedup, supersede, put)."""
