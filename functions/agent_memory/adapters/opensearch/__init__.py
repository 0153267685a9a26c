"""The OpenSearch adapters: the client, the indexes, and the `MemoryStore` on k-NN.

`opensearch_store.OpenSearchStore` is one class per port (`opensearch_records`,
`opensearch_retrieval`, `opensearch_audit`, `opensearch_search_log`, `opensearch_directory`,
`opensearch_retention`) over one shared base (`opensearch_base`). The request bodies are built by
pure functions apart from the I/O (`opensearch_filters`, `opensearch_queries`,
`opensearch_retention_queries`, `opensearch_events`, `opensearch_scripts`, `opensearch_documents`,
`opensearch_cursors`), and responses are checked in `opensearch_responses`, so a request's shape
can be pinned without a cluster. The indexes: `opensearch_index` (their design and the start-up
check), `opensearch_bootstrap`, `opensearch_upgrade`, `opensearch_roles`.
"""
