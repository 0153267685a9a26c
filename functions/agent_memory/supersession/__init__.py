"""Supersession: marking what a write supersedes, and the daily review of those links."""
