"""The change feed: change events published, and delivered to tenants' webhooks."""
