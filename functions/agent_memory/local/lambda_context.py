"""A Lambda context for handlers run outside Lambda (the local server, `invoke`, tests)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field


@dataclass
class LocalContext:
    function_name: str = "agent-memory-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:local:000000000000:function:agent-memory-local"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/local/agent-memory"
    log_stream_name: str = "local"
    timeout_s: float = 30.0
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(int((self.timeout_s - (time.monotonic() - self._started)) * 1000), 0)
