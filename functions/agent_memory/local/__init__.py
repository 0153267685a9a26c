"""The embedded local runtime: the same handlers and services on one machine, no AWS needed."""
