"""One boto3 default session for every moto mock of a test run.

moto replaces boto3's default session with a new one at each mock's start, and each new session
loads every service model it is asked for again: 0.1-0.4 s of CPU for each client a test makes,
minutes over a run. The tests' clients carry fake credentials whatever session made them, and
moto intercepts the requests of every session made after moto is imported (its handler is one of
botocore's built-in ones from then on), so one session can serve them all.
"""

from __future__ import annotations

from moto.core.config import default_user_config


def keep_one_boto3_session() -> None:
    """Tell every later `mock_aws` to keep boto3's default session (call it before any session
    is made: importing this module imports moto, which registers its handler first)."""
    default_user_config["core"]["reset_boto3_session"] = False
