"""Lambda entry points. Each module parses, calls one service, and shapes the response."""
