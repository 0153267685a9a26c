"""The memory store's schema: its tables, indexes and triggers, and the upgrades of older files.

Kept apart from the code that reads and writes so the whole layout of ``memory.db`` reads in one
place: the partial indexes that make every read of live records an index scan, the FTS5 table
kept in step by triggers, and the per-agent generations the vector cache watches (see
`sqlite_vectors`). `SqliteDatabase` applies it, in one transaction, whenever a file is opened.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = "2"

#: How the text indexes split and stem words; a query's words are stemmed the same way
#: (`QUERY_STEMS`).
TOKENIZER = "porter unicode61 remove_diacritics 2"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    user_id TEXT,
    grain TEXT NOT NULL,
    time_key TEXT,
    period_start INTEGER,
    period_end INTEGER,
    kind TEXT NOT NULL,
    role TEXT,
    conversation_id TEXT,
    content TEXT NOT NULL,
    topic TEXT,
    topic_raw TEXT,
    importance REAL NOT NULL,
    tags TEXT NOT NULL,
    source TEXT,
    links TEXT NOT NULL,
    metadata TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    access_count INTEGER NOT NULL,
    last_accessed_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    occurred_at INTEGER NOT NULL,
    expires_at INTEGER,
    deleted_at INTEGER,
    speaker TEXT,
    context TEXT,
    merged_from TEXT NOT NULL DEFAULT '[]',
    last_seen_at INTEGER,
    user_ids TEXT NOT NULL DEFAULT '[]',
    -- An experience's learning part (JSON) and its confidence (for the filter); NULL otherwise.
    experience TEXT,
    confidence REAL,
    -- Supersession (NULL / '[]': none): see MemoryRecord.valid_from.
    valid_from INTEGER,
    valid_to INTEGER,
    supersedes TEXT NOT NULL DEFAULT '[]',
    superseded_by TEXT,
    span_start INTEGER NOT NULL,
    span_end INTEGER NOT NULL,
    vector BLOB NOT NULL,
    -- The agent's generation that wrote this row's vector (see the generations table).
    vgen INTEGER NOT NULL,
    UNIQUE (tenant_id, agent_id, id)
);
-- Reads only ever look at live (not forgotten) records, so the indexes hold only those. The
-- first covers every eligibility test except tags, and stats() too, so finding which rows a search may
-- score never touches the wide table rows; the other two give list() and browsing their order.
CREATE INDEX IF NOT EXISTS records_live
    ON records (tenant_id, agent_id, grain, span_end, span_start, expires_at, kind, user_id, occurred_at)
    WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_live_by_time
    ON records (tenant_id, agent_id, occurred_at, id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_live_by_grain_time
    ON records (tenant_id, agent_id, grain, occurred_at, id) WHERE deleted_at IS NULL;
-- The two cross-agent jobs: retention (forgotten records included) and the summarization
-- dispatcher (which agents have live records of a grain in a period, in a stable order).
CREATE INDEX IF NOT EXISTS records_live_by_vgen
    ON records (tenant_id, agent_id, vgen) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS records_by_retention ON records (tenant_id, grain, span_end);
CREATE INDEX IF NOT EXISTS records_live_by_agent
    ON records (grain, tenant_id, agent_id, span_end, span_start) WHERE deleted_at IS NULL;

CREATE TABLE IF NOT EXISTS aliases (
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    alias_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, alias_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    at INTEGER NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_by_agent ON audit (tenant_id, agent_id, at);
CREATE INDEX IF NOT EXISTS audit_by_record ON audit (tenant_id, agent_id, record_id, seq);

-- Searches per agent and UTC day (counts only, never the query): the console's zero-hit view.
CREATE TABLE IF NOT EXISTS search_days (
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    day TEXT NOT NULL,
    searches INTEGER NOT NULL,
    zero_hits INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, day)
) WITHOUT ROWID;

-- Per agent: ``gen`` moves with every write that may change its live vectors, ``shrink`` with
-- every one that removes a record (forget, hard delete). A cache at (gen, shrink) is current;
-- one at an older gen but the same shrink only misses the rows whose vgen is newer.
CREATE TABLE IF NOT EXISTS generations (
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    gen INTEGER NOT NULL,
    shrink INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS records_live_by_conversation
    ON records (tenant_id, agent_id, conversation_id, occurred_at)
    WHERE deleted_at IS NULL AND conversation_id IS NOT NULL;

-- Words are stemmed (porter): "went camping" finds "camped"; query words are stemmed alike.
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    content, topic, speaker, context, content='records', content_rowid='seq',
    tokenize='@TOKENIZER@'
);
-- How many documents hold each indexed term (for dropping near-weightless common words).
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts_vocab USING fts5vocab(records_fts, 'row');

-- The FTS index holds live (not forgotten) records only. Old values are removed before new ones
-- are added, in one trigger, because an external-content FTS table must be told what it indexed.
CREATE TRIGGER IF NOT EXISTS records_fts_insert AFTER INSERT ON records BEGIN
    INSERT INTO records_fts (rowid, content, topic, speaker, context)
        SELECT new.seq, new.content, new.topic, new.speaker, new.context WHERE new.deleted_at IS NULL;
END;
CREATE TRIGGER IF NOT EXISTS records_fts_delete AFTER DELETE ON records BEGIN
    INSERT INTO records_fts (records_fts, rowid, content, topic, speaker, context)
        SELECT 'delete', old.seq, old.content, old.topic, old.speaker, old.context
        WHERE old.deleted_at IS NULL;
END;
CREATE TRIGGER IF NOT EXISTS records_fts_update
    AFTER UPDATE OF content, topic, speaker, context, deleted_at ON records
BEGIN
    INSERT INTO records_fts (records_fts, rowid, content, topic, speaker, context)
        SELECT 'delete', old.seq, old.content, old.topic, old.speaker, old.context
        WHERE old.deleted_at IS NULL;
    INSERT INTO records_fts (rowid, content, topic, speaker, context)
        SELECT new.seq, new.content, new.topic, new.speaker, new.context WHERE new.deleted_at IS NULL;
END;

-- Any change to the set of an agent's live vectors moves its generation (same transaction).
-- Access counters do not, so searching never invalidates the vector cache.
CREATE TRIGGER IF NOT EXISTS records_gen_insert AFTER INSERT ON records BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink) VALUES (new.tenant_id, new.agent_id, 1, 0)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER IF NOT EXISTS records_gen_update AFTER UPDATE OF vector, deleted_at ON records BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink)
        VALUES (new.tenant_id, new.agent_id, 1, new.deleted_at IS NOT NULL AND old.deleted_at IS NULL)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1, shrink = shrink + excluded.shrink;
END;
CREATE TRIGGER IF NOT EXISTS records_gen_delete AFTER DELETE ON records BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink) VALUES (old.tenant_id, old.agent_id, 1, 1)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1, shrink = shrink + 1;
END;
-- Records' vectors in a tenant's own embedding spaces (`sqlite_spaces`); the deployment's space
-- is ``records.vector``. A vector row moves its agent's generation like a record does, and goes
-- with its record.
CREATE TABLE IF NOT EXISTS space_vectors (
    space TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (space, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS space_vectors_by_agent ON space_vectors (tenant_id, space, agent_id, seq);
CREATE INDEX IF NOT EXISTS space_vectors_by_seq ON space_vectors (seq);
CREATE TRIGGER IF NOT EXISTS space_vectors_gen_insert AFTER INSERT ON space_vectors BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink) VALUES (new.tenant_id, new.agent_id, 1, 0)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER IF NOT EXISTS space_vectors_gen_delete AFTER DELETE ON space_vectors BEGIN
    INSERT INTO generations (tenant_id, agent_id, gen, shrink) VALUES (old.tenant_id, old.agent_id, 1, 1)
        ON CONFLICT (tenant_id, agent_id) DO UPDATE SET gen = gen + 1, shrink = shrink + 1;
END;
CREATE TRIGGER IF NOT EXISTS records_space_vectors_delete AFTER DELETE ON records BEGIN
    DELETE FROM space_vectors WHERE seq = old.seq;
END;
-- Shared knowledge (`sqlite_knowledge`): documents whole, their passages with vectors, and the
-- tombstones of deleted documents. No agent and no grain: nothing the cascade or retention reads.
CREATE TABLE IF NOT EXISTS knowledge_documents (
    tenant_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    body TEXT NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    last_hit_at INTEGER,
    PRIMARY KEY (tenant_id, doc_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS knowledge_tombstones (
    tenant_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, doc_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS knowledge_passages (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    title TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    valid_from TEXT,
    valid_until TEXT,
    tags TEXT NOT NULL,
    body TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS knowledge_passages_by_doc ON knowledge_passages (tenant_id, doc_id, ordinal);
-- Per tenant, moved by every change to its passages: the vector cache's key.
CREATE TABLE IF NOT EXISTS knowledge_generations (
    tenant_id TEXT PRIMARY KEY,
    gen INTEGER NOT NULL
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS knowledge_fts USING fts5(
    text, title, heading_path, content='knowledge_passages', content_rowid='seq',
    tokenize='@TOKENIZER@'
);
CREATE TRIGGER IF NOT EXISTS knowledge_passages_insert AFTER INSERT ON knowledge_passages BEGIN
    INSERT INTO knowledge_fts (rowid, text, title, heading_path)
        VALUES (new.seq, new.text, new.title, new.heading_path);
    INSERT INTO knowledge_generations (tenant_id, gen) VALUES (new.tenant_id, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET gen = gen + 1;
END;
CREATE TRIGGER IF NOT EXISTS knowledge_passages_delete AFTER DELETE ON knowledge_passages BEGIN
    INSERT INTO knowledge_fts (knowledge_fts, rowid, text, title, heading_path)
        VALUES ('delete', old.seq, old.text, old.title, old.heading_path);
    INSERT INTO knowledge_generations (tenant_id, gen) VALUES (old.tenant_id, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET gen = gen + 1;
END;
""".replace("@TOKENIZER@", TOKENIZER)

#: Per connection, in its temporary database: a scratch text index of the same tokenizer whose
#: vocabulary gives a query's words as the index stores them (`sqlite_retrieval._stems`).
QUERY_STEMS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5(t, tokenize='{TOKENIZER}');\n"
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems_vocab "
    "USING fts5vocab(temp, query_stems, 'instance');"
)


def split_sql(script: str) -> list[str]:
    """The schema's statements, one by one (``executescript`` would commit our transaction).

    Triggers contain ``;`` in their bodies, so a statement ends at a ``;`` that closes a line
    outside a ``BEGIN ... END`` block.
    """
    statements: list[str] = []
    current: list[str] = []
    in_trigger = False
    for line in script.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("--")):
            continue
        current.append(line)
        if stripped.startswith("CREATE TRIGGER"):
            in_trigger = True
        if stripped.endswith(";") and (not in_trigger or stripped == "END;"):
            statements.append("\n".join(current))
            current, in_trigger = [], False
    return statements


def needs_v2_migration(conn: sqlite3.Connection) -> bool:
    """A version 1 file: records without ``speaker`` and ``context``, a text index without stems."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
    return bool(columns) and "speaker" not in columns


def drop_v1_text_index(conn: sqlite3.Connection) -> None:
    """Version 1 -> 2 in place: add the two columns, drop the text index and its triggers (the
    schema re-creates them and the caller rebuilds the index). Vectors are kept as they are:
    records written before the upgrade are searched as they were embedded."""
    conn.execute("ALTER TABLE records ADD COLUMN speaker TEXT")
    conn.execute("ALTER TABLE records ADD COLUMN context TEXT")
    for trigger in ("records_fts_insert", "records_fts_delete", "records_fts_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP TABLE IF EXISTS records_fts_vocab")
    conn.execute("DROP TABLE IF EXISTS records_fts")
