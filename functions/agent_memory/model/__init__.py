"""The types every layer shares: records, grains, ids, limits, the caller, messages, queries."""
