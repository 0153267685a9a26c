"""Recall: search, context for a prompt, memories read back, the timeline, operator views."""
