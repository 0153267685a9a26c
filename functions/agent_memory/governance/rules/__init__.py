"""Governance's pure rules: plans and lifetimes, export jobs, a memory's versions."""
