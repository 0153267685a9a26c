"""Adapters: the implementations of the ports that talk to the outside world (cloud, models, disk)."""
