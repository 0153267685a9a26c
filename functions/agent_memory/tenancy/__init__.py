"""Tenancy: a tenant's settings, the models it chose, its embedding space, API-key auth."""
