"""Tenancy's pure rules: settings, embedding spaces, keys, usage plans, outbound policy."""
