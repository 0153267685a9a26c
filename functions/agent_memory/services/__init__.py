"""Use cases. Each service depends on ports only and is built once per cold start."""
