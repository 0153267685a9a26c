"""Shared knowledge: a tenant's documents, and its topic dictionary."""
