"""Ports: the narrow interfaces between the services and the outside world.

Services depend on these Protocols only. Adapters (`agent_memory.adapters`) implement them and
are the only modules that import a cloud SDK or a model runtime. Every port is small on purpose:
a method exists because a use case needs it.

Each module holds one part; every name is also importable from here (``from agent_memory.ports
import X``). The store (`MemoryStore`, in `memory_store`) is made of the parts in `record_store`,
`retrieval`, `audit`, `directory`, `retention_store`, `knowledge_store`, `spaces` and
`export_store`; the rest are the queues, the models, the clock and the per-tenant tables.
"""

# The vocabularies some ports speak in, re-exported for their callers.
from agent_memory.knowledge.rules.passages import DocumentPage as DocumentPage
from agent_memory.knowledge.rules.passages import KnowledgeDocument as KnowledgeDocument
from agent_memory.knowledge.rules.passages import Passage as Passage
from agent_memory.knowledge.rules.passages import PassageCandidate as PassageCandidate
from agent_memory.model.audit_actions import AuditAction as AuditAction
from agent_memory.model.operator_views import SearchDay as SearchDay
from agent_memory.ports.audit import *  # noqa: F403 (the audit trail and the search log)
from agent_memory.ports.clocks import *  # noqa: F403
from agent_memory.ports.directory import *  # noqa: F403 (which agents have memory)
from agent_memory.ports.embedding import *  # noqa: F403 (vectors, the embedder, the reranker)
from agent_memory.ports.export_store import RecordExport as RecordExport
from agent_memory.ports.idempotent_calls import *  # noqa: F403
from agent_memory.ports.key_store import *  # noqa: F403 (API keys and read grants)
from agent_memory.ports.knowledge_store import KnowledgeStore as KnowledgeStore
from agent_memory.ports.knowledge_store import ManagedKnowledge as ManagedKnowledge
from agent_memory.ports.knowledge_store import PassageQuery as PassageQuery
from agent_memory.ports.knowledge_store import SearchableKnowledge as SearchableKnowledge
from agent_memory.ports.knowledge_store import StoredPassage as StoredPassage
from agent_memory.ports.knowledge_store import WritableKnowledge as WritableKnowledge
from agent_memory.ports.memory_store import *  # noqa: F403 (the store whole, and its per-use-case views)
from agent_memory.ports.queues import *  # noqa: F403 (writes, dead letters, jobs, pending writes)
from agent_memory.ports.record_store import *  # noqa: F403 (records by id)
from agent_memory.ports.retention_store import *  # noqa: F403 (retention's reads and deletes, plans)
from agent_memory.ports.retrieval import *  # noqa: F403 (search by meaning and by words)
from agent_memory.ports.spaces import EmbeddingSpaces as EmbeddingSpaces
from agent_memory.ports.spaces import SpaceVector as SpaceVector
from agent_memory.ports.summarizer import *  # noqa: F403
from agent_memory.ports.topic_store import *  # noqa: F403 (per-tenant topic dictionaries)
