"""Memory as LLM tools: definitions for Bedrock Converse, Anthropic Messages and OpenAI chat, from
one set of pydantic models, and a dispatcher that runs the model's tool calls.

    from agent_memory.client import MemoryClient
    from agent_memory.tools import MemoryTools

    tools = MemoryTools(MemoryClient(url, api_key=key), agent_id="support-bot")
    tools.anthropic()                    # -> messages.create(tools=...)
    tools.run_tool_calls(reply.content)  # -> the tool_result blocks of the next user message
"""

from agent_memory.tools.formats import llm_schema
from agent_memory.tools.specs import (
    TOOLS,
    TOOLS_BY_NAME,
    MemoryApi,
    ToolContext,
    ToolSpec,
    anthropic_tools,
    bedrock_tools,
    openai_tools,
)
from agent_memory.tools.tool_calls import MemoryTools, ToolCall, ToolResult, parse_tool_call

__all__ = [
    "TOOLS",
    "TOOLS_BY_NAME",
    "MemoryApi",
    "MemoryTools",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "anthropic_tools",
    "bedrock_tools",
    "llm_schema",
    "openai_tools",
    "parse_tool_call",
]
