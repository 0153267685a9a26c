"""Governance: forgetting and erasure, retention, exports, history and restore, grants."""
