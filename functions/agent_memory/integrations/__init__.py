"""Native integrations with agent frameworks, one module each, each behind its own extra.

Nothing here is imported by the service or by the client: a module imports its framework when
the module itself is imported, so an application that uses none of them never needs one.

- `agent_memory.integrations.langgraph_store`: a LangGraph ``BaseStore`` and a context node
  (``pip install 'agent-memory[langgraph]'``);
- `agent_memory.integrations.openai_agents`: an OpenAI Agents SDK ``Session`` and function tools
  (``pip install 'agent-memory[openai-agents]'``);
- `agent_memory.integrations.llamaindex_memory`: a LlamaIndex memory block and tools
  (``pip install 'agent-memory[llamaindex]'``);
- `agent_memory.integrations.strands_memory`: Strands Agents tools and a hook provider that keeps
  the conversation's turns (``pip install 'agent-memory[strands]'``).
"""
