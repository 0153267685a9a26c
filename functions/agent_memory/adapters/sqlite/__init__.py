"""The SQLite adapters of the embedded runtime: the memory store (`sqlite_store`, one module per
port around it), API keys (`sqlite_keys`), topic dictionaries (`sqlite_topics`), and the
connection handling they share (`sqlite_util`)."""
