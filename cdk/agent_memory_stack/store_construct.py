"""What both stores (`FileStore`, the serverless store's bucket; `VectorStore`, the OpenSearch
domain) share: the stack's configuration, and building a function that reads or writes memory
with the store's settings (`environment`, each store's own)."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.function_factory import FunctionFactory


class StoreConstruct(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: StackConfig, factory: FunctionFactory
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.factory = factory

    def environment(self, function: str) -> dict[str, str]:
        """Settings of the function ``function`` that reads or writes memory."""
        raise NotImplementedError

    def build_function(
        self, scope: Construct, name: str, description: str, environment: Mapping[str, str]
    ) -> lambda_.Function:
        """A function that reads or writes memory (`FunctionFactory.build`): the store's settings,
        then ``environment``. Its construct grants it the store (``grant_data_access``) with the rest."""
        return self.factory.build(scope, name, description, {**self.environment(name), **environment})
