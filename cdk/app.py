#!/usr/bin/env python3
"""The CDK app: validate the configuration, build the stack, run cdk-nag (AwsSolutions).

``cdk synth`` / ``cdk deploy`` run this (see cdk.json and the Makefile's ``synth`` and ``deploy``).
A configuration error prints every problem and exits with status 2 before anything is built.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aws_cdk import App, Environment, Validations
from cdk_nag import AwsSolutionsChecks

from agent_memory_stack.config import ConfigError, StackConfig, load_config
from agent_memory_stack.stack import AgentMemoryStack


def build(app: App, config: StackConfig, env: Environment | None = None) -> AgentMemoryStack:
    """The stack for ``config`` in ``app``, with cdk-nag's AwsSolutions checks on the app.

    The account and region default to those the CDK CLI found in your credentials; without
    them the template is environment-agnostic.
    """
    env = env or Environment(
        account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")
    )
    stack = AgentMemoryStack(app, config.prefix, config=config, env=env)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return stack


def main() -> int:
    app = App()
    try:
        config = load_config(app.node)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    build(app, config)
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
