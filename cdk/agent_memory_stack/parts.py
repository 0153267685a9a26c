"""What the capability constructs build on, made once by the stack and handed to each."""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory_stack.config import StackConfig
from agent_memory_stack.file_store import FileStore
from agent_memory_stack.function_factory import FunctionFactory
from agent_memory_stack.scheduling import Scheduling
from agent_memory_stack.vector_store import VectorStore
from agent_memory_stack.write_pipeline import WritePipeline


@dataclass(frozen=True)
class StackParts:
    """The configuration, the function factory, the vector store (`VectorStore.build_function` for
    the functions that keep memory), the write pipeline and the schedules."""

    config: StackConfig
    factory: FunctionFactory
    store: VectorStore | FileStore
    writes: WritePipeline
    scheduling: Scheduling
