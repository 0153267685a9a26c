"""Derived memories: stale marks a forget walks, and the jobs making patterns and profiles."""
