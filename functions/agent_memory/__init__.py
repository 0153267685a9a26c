"""agent-memory: long-term memory for AI agents.

The package is the core that every Lambda function and the local runtime share: the domain
(`domain`), the use cases (`services`), the ports they depend on (`ports`), the adapters that
talk to the outside world (`adapters`), thin handlers (`handlers`) and the embedded local
runtime (`local`).
"""

__version__ = "0.1.0"
