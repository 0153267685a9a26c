"""The agent-memory CDK app: one stack composed of one construct per capability."""
