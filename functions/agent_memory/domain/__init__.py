"""Pure domain: grains and time keys, records, API models and limits. No I/O here."""
