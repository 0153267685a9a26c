"""What both stores (`FileStore`, the serverless store's bucket; `VectorStore`, the OpenSearch
domain) share: the stack's configuration, and building a function that reads or writes memory
with the store's settings (`environment`, each store's own)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.function_factory import FunctionFactory


@dataclass(frozen=True, slots=True)
class DataAccess:
    """What a function may do with the store (`StoreConstruct.grant_data_access`)."""

    admin: bool = False
    read_only: bool = False
    reads_knowledge: bool = False


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

    def grant_data_access(
        self,
        function: lambda_.IFunction,
        *,
        admin: bool = False,
        read_only: bool = False,
        reads_knowledge: bool = False,
    ) -> None:
        """Let ``function`` use the store: ``admin`` (it makes and upgrades indexes), ``read_only``
        (it never writes), ``reads_knowledge`` (it reads shared knowledge). One signature here, so
        every construct grants either store the same way; each store says what the flags mean to
        it in `_grant`."""
        self._grant(function, DataAccess(admin=admin, read_only=read_only, reads_knowledge=reads_knowledge))

    def _grant(self, function: lambda_.IFunction, access: DataAccess) -> None:
        """Each store's grant of ``access`` to ``function`` (`grant_data_access`)."""
        raise NotImplementedError

    def build_function(
        self, scope: Construct, name: str, description: str, environment: Mapping[str, str]
    ) -> lambda_.Function:
        """A function that reads or writes memory (`FunctionFactory.build`): the store's settings,
        then ``environment``. Its construct grants it the store (``grant_data_access``) with the rest."""
        return self.factory.build(scope, name, description, {**self.environment(name), **environment})
