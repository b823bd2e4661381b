//! Schema versions and migrations.
//!
//! `PRAGMA user_version` holds the applied version. Each migration runs in the
//! same transaction as its version bump, so a crash leaves either the old or the
//! new schema, never half of one. Migrations are append-only: never edit a
//! shipped step, add a new one.

use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::store::checksum::{self, Covered};

/// One step: the version it produces, the SQL that gets there, and what
/// SQL cannot do (a checksum), run after it in the same transaction.
struct Migration {
    version: i64,
    sql: &'static str,
    fill: Option<fn(&Connection) -> Result<()>>,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: r"
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;

        -- Append-only log of every write. `seq` is the watermark unit of the
        -- derived indexes and, for upserts, the key of the vector/text version
        -- the write created (keys are never reused).
        CREATE TABLE oplog (
            seq       INTEGER PRIMARY KEY AUTOINCREMENT,
            at        INTEGER NOT NULL,
            action    INTEGER NOT NULL,   -- 1 upsert doc, 2 delete doc, 3 metadata only
            kind      INTEGER NOT NULL,   -- record kind (memory, observation, ...)
            record_id TEXT    NOT NULL,
            namespace TEXT    NOT NULL,
            prev_key  INTEGER             -- the doc key this write retires, if any
        );

        CREATE TABLE memories (
            id                  TEXT NOT NULL UNIQUE,
            namespace           TEXT    NOT NULL,
            content             TEXT    NOT NULL,
            memory_type         TEXT    NOT NULL,
            source              TEXT    NOT NULL,
            confidence          REAL    NOT NULL,
            importance          REAL    NOT NULL,
            metadata            TEXT    NOT NULL,
            thread_id           TEXT,
            user_id             TEXT,
            event_time          INTEGER,
            created_at          INTEGER NOT NULL,
            updated_at          INTEGER NOT NULL,
            accessed_at         INTEGER NOT NULL,
            valid_from          INTEGER NOT NULL,
            valid_until         INTEGER,
            invalidated_at      INTEGER,
            invalidation_reason TEXT,
            supersedes          TEXT,
            superseded_by       TEXT,
            expires_at          INTEGER,
            doc_key             INTEGER NOT NULL,  -- oplog seq of the current content version
            embedding           BLOB               -- little-endian f32, last so listings skip it
        );
        CREATE INDEX memories_by_time   ON memories(namespace, created_at DESC, id DESC);
        CREATE INDEX memories_by_thread ON memories(namespace, thread_id, created_at DESC);
        CREATE UNIQUE INDEX memories_by_doc_key ON memories(doc_key);
    ",
        fill: None,
    },
    Migration {
        version: 2,
        sql: r"
        -- The knowledge graph. Entity names are unique per namespace without
        -- regard to case (name_key is the lower-cased name).
        CREATE TABLE entities (
            id          TEXT NOT NULL UNIQUE,
            namespace   TEXT NOT NULL,
            name        TEXT NOT NULL,
            name_key    TEXT NOT NULL,
            entity_type TEXT NOT NULL,
            description TEXT,
            importance  REAL NOT NULL,
            confidence  REAL NOT NULL,
            thread_id   TEXT,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL,
            valid_from  INTEGER NOT NULL,
            valid_until INTEGER,
            doc_key     INTEGER NOT NULL,   -- name + type + description, searchable
            embedding   BLOB
        );
        CREATE UNIQUE INDEX entities_by_name ON entities(namespace, name_key);
        CREATE UNIQUE INDEX entities_by_doc_key ON entities(doc_key);

        CREATE TABLE observations (
            id            TEXT NOT NULL UNIQUE,
            namespace     TEXT NOT NULL,
            entity_id     TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            content       TEXT NOT NULL,
            version       INTEGER NOT NULL,
            supersedes    TEXT,
            superseded_by TEXT,
            thread_id     TEXT,
            confidence    REAL NOT NULL,
            importance    REAL NOT NULL,
            created_at    INTEGER NOT NULL,
            valid_from    INTEGER NOT NULL,
            valid_until   INTEGER,
            doc_key       INTEGER NOT NULL,
            embedding     BLOB
        );
        CREATE INDEX observations_by_entity ON observations(entity_id, created_at);
        CREATE UNIQUE INDEX observations_by_doc_key ON observations(doc_key);

        CREATE TABLE relations (
            id            TEXT NOT NULL UNIQUE,
            namespace     TEXT NOT NULL,
            from_entity   TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            to_entity     TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            relation_type TEXT NOT NULL,
            importance    REAL NOT NULL,
            thread_id     TEXT,
            created_at    INTEGER NOT NULL,
            valid_from    INTEGER NOT NULL,
            valid_until   INTEGER
        );
        CREATE UNIQUE INDEX relations_by_triple ON relations(from_entity, to_entity, relation_type);
        CREATE INDEX relations_by_target ON relations(to_entity);

        -- Memory <-> entity links: given explicitly or found by name.
        CREATE TABLE mentions (
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            explicit  INTEGER NOT NULL,
            PRIMARY KEY (memory_id, entity_id)
        ) WITHOUT ROWID;
        CREATE INDEX mentions_by_entity ON mentions(entity_id);
    ",
        fill: None,
    },
    Migration {
        version: 3,
        sql: r"
        -- The interaction log: conversations of turns; a turn's user text is
        -- searchable, its agent text and procedures are reached from it.
        CREATE TABLE conversations (
            namespace   TEXT NOT NULL,
            id          TEXT NOT NULL,          -- the caller's conversation id
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL,
            last_hit_at INTEGER,                -- last time retrieval surfaced it
            archived_at INTEGER,
            PRIMARY KEY (namespace, id)
        ) WITHOUT ROWID;

        CREATE TABLE turns (
            id              TEXT NOT NULL UNIQUE,   -- internal 'turn_' id
            namespace       TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            turn_key        TEXT NOT NULL,          -- the caller's turn id (idempotency)
            turn_index      INTEGER NOT NULL,
            user_text       TEXT NOT NULL,
            agent_text      TEXT,
            thread_id       TEXT,
            created_at      INTEGER NOT NULL,
            doc_key         INTEGER NOT NULL,
            embedding       BLOB
        );
        CREATE UNIQUE INDEX turns_by_key ON turns(namespace, conversation_id, turn_key);
        CREATE INDEX turns_by_conversation ON turns(namespace, conversation_id, turn_index);
        CREATE UNIQUE INDEX turns_by_doc_key ON turns(doc_key);

        -- Documents (hypernodes) and the versions the agent observed.
        CREATE TABLE documents (
            id         TEXT NOT NULL UNIQUE,
            namespace  TEXT NOT NULL,
            canonical  TEXT NOT NULL,               -- relative path, absolute path or URL
            created_at INTEGER NOT NULL,
            UNIQUE (namespace, canonical)
        );

        CREATE TABLE doc_versions (
            id           TEXT NOT NULL UNIQUE,
            document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            version      INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            content      TEXT,                      -- kept up to a size limit
            size         INTEGER,
            provenance   TEXT NOT NULL,             -- 'agent' or 'external'
            turn_id      TEXT,                      -- the turn that observed it
            created_at   INTEGER NOT NULL,
            UNIQUE (document_id, version)
        );

        -- Procedures: tool calls of a turn, linked to the versions they touched.
        CREATE TABLE procedures (
            id         TEXT NOT NULL UNIQUE,
            turn_id    TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            position   INTEGER NOT NULL,
            tool       TEXT NOT NULL,
            args       TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX procedures_by_turn ON procedures(turn_id, position);

        CREATE TABLE procedure_documents (
            procedure_id TEXT NOT NULL REFERENCES procedures(id) ON DELETE CASCADE,
            version_id   TEXT NOT NULL REFERENCES doc_versions(id) ON DELETE CASCADE,
            PRIMARY KEY (procedure_id, version_id)
        ) WITHOUT ROWID;
        CREATE INDEX procedure_documents_by_version ON procedure_documents(version_id);
    ",
        fill: None,
    },
    Migration {
        version: 4,
        sql: r"
        -- Code search: projects, their indexed files (hash per file for
        -- incremental re-indexing) and the chunks (kind code_chunk, scoped
        -- by project, tagged by language).
        CREATE TABLE projects (
            namespace     TEXT NOT NULL,
            id            TEXT NOT NULL,
            root          TEXT NOT NULL,
            status        TEXT NOT NULL,          -- idle / indexing / watching / error
            total_files   INTEGER NOT NULL DEFAULT 0,
            indexed_files INTEGER NOT NULL DEFAULT 0,
            total_chunks  INTEGER NOT NULL DEFAULT 0,
            started_at    INTEGER,
            completed_at  INTEGER,
            error         TEXT,
            updated_at    INTEGER NOT NULL,
            PRIMARY KEY (namespace, id)
        ) WITHOUT ROWID;

        CREATE TABLE code_files (
            namespace    TEXT NOT NULL,
            project_id   TEXT NOT NULL,
            path         TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            language     TEXT,
            size         INTEGER,
            chunk_count  INTEGER NOT NULL,
            indexed_at   INTEGER NOT NULL,
            PRIMARY KEY (namespace, project_id, path)
        ) WITHOUT ROWID;

        CREATE TABLE code_chunks (
            id           TEXT NOT NULL UNIQUE,
            namespace    TEXT NOT NULL,
            project_id   TEXT NOT NULL,
            file_path    TEXT NOT NULL,
            language     TEXT NOT NULL,
            start_line   INTEGER NOT NULL,
            end_line     INTEGER NOT NULL,
            chunk_type   TEXT NOT NULL,
            name         TEXT,
            parent_scope TEXT,
            content      TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            indexed_at   INTEGER NOT NULL,
            doc_key      INTEGER NOT NULL,
            embedding    BLOB
        );
        CREATE INDEX code_chunks_by_file ON code_chunks(namespace, project_id, file_path);
        CREATE UNIQUE INDEX code_chunks_by_doc_key ON code_chunks(doc_key);
    ",
        fill: None,
    },
    Migration {
        version: 5,
        sql: r"
        -- Which turns touched which documents, newest first per document, so
        -- hypernode lookup reads an index range instead of joining and sorting
        -- every version and procedure of a popular file; and the distinct
        -- conversations per document (familiarity) as rows to count.
        CREATE TABLE document_touches (
            document_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            turn_id         TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            conversation_id TEXT NOT NULL,
            at              INTEGER NOT NULL,
            PRIMARY KEY (document_id, turn_id)
        ) WITHOUT ROWID;
        CREATE INDEX document_touches_by_time ON document_touches(document_id, at DESC);

        CREATE TABLE document_conversations (
            document_id     TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            conversation_id TEXT NOT NULL,
            PRIMARY KEY (document_id, conversation_id)
        ) WITHOUT ROWID;

        INSERT OR IGNORE INTO document_touches(document_id, turn_id, conversation_id, at)
            SELECT v.document_id, t.id, t.conversation_id, t.created_at
            FROM doc_versions v
            JOIN procedure_documents pd ON pd.version_id = v.id
            JOIN procedures p ON p.id = pd.procedure_id
            JOIN turns t ON t.id = p.turn_id;
        INSERT OR IGNORE INTO document_conversations(document_id, conversation_id)
            SELECT document_id, conversation_id FROM document_touches;
    ",
        fill: None,
    },
    Migration {
        version: 6,
        sql: r"
        -- Counters for the signals of retrieve_context, kept as rows are added:
        -- counting a popular file's versions and conversations at read time
        -- visited thousands of rows per document (110 ms per request at 10k
        -- turns). `externals` = external versions up to and including this
        -- one, so the external versions after version v are a difference of
        -- two rows; `conversations` = distinct conversations that touched it.
        ALTER TABLE doc_versions ADD COLUMN externals INTEGER NOT NULL DEFAULT 0;
        UPDATE doc_versions SET externals = running.externals
            FROM (SELECT id, sum(provenance = 'external')
                         OVER (PARTITION BY document_id ORDER BY version) AS externals
                  FROM doc_versions) AS running
            WHERE running.id = doc_versions.id;
        ALTER TABLE documents ADD COLUMN conversations INTEGER NOT NULL DEFAULT 0;
        UPDATE documents SET conversations =
            (SELECT count(*) FROM document_conversations dc WHERE dc.document_id = documents.id);
    ",
        fill: None,
    },
    Migration {
        version: 7,
        sql: r"
        -- search_code ranks the chunks that define a name the query gives
        -- first (crate::engine::code_weights::defined_names), found by name.
        CREATE INDEX code_chunks_by_name ON code_chunks(namespace, name);
    ",
        fill: None,
    },
    Migration {
        version: 8,
        sql: r"
        -- The automatic path (docs/guide.md, the automatic path section).
        -- A fact's retention tier: L1 (today), L2 (this week or a passing
        -- state) or durable; its expiry is the row's expires_at.
        ALTER TABLE memories ADD COLUMN tier TEXT NOT NULL DEFAULT 'durable';
        CREATE INDEX memories_pending_vector ON memories(namespace) WHERE embedding IS NULL;

        -- memory_after_turn's claims: one row per (namespace, session, turn)
        -- taken before the turn is processed and finished with its result,
        -- so a duplicate from any process or node is answered from here
        -- (done) or told to retry (in flight). Bounded per session by
        -- maintenance (max_processed_turns).
        CREATE TABLE turn_claims (
            namespace  TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_id    TEXT NOT NULL,
            claimed_at INTEGER NOT NULL,
            done_at    INTEGER,
            result     TEXT,
            PRIMARY KEY (namespace, session_id, turn_id)
        ) WITHOUT ROWID;

        -- Each conversation's extractive summary, refreshed by maintenance
        -- at most every summary_refresh_interval_minutes.
        CREATE TABLE conversation_summaries (
            namespace       TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            summary         TEXT NOT NULL,
            turns           INTEGER NOT NULL,   -- turns the summary covers
            refreshed_at    INTEGER NOT NULL,
            PRIMARY KEY (namespace, conversation_id)
        ) WITHOUT ROWID;
    ",
        fill: None,
    },
    Migration {
        version: 9,
        sql: r"
        -- Per-record checksums (crate::store::checksum): a CRC-32 of the
        -- columns a reader relies on, verified by every read of the record,
        -- so a record altered on disk is refused, not served. Filled below
        -- for the rows already there (trusted once, here).
        ALTER TABLE memories ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE turns ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE code_chunks ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
    ",
        fill: Some(fill_checksums_v9),
    },
];

/// What the checksums of version 9 cover, as that version's columns name
/// them: frozen here, so that a later step changing a table cannot break
/// this one (`version_9_covers_what_the_tables_verify` holds them equal to
/// the tables' definitions; a change of those needs a step that refills).
const CHECKSUMS_V9: [Covered; 3] = [
    Covered {
        table: "memories",
        columns: "id, namespace, content, memory_type, source, confidence, importance, \
                  metadata, thread_id, user_id, event_time, created_at, updated_at, \
                  accessed_at, valid_from, valid_until, invalidated_at, invalidation_reason, \
                  supersedes, superseded_by, expires_at, tier, doc_key",
        count: 23,
        skipped: &[13],
    },
    Covered {
        table: "turns",
        columns: "id, namespace, conversation_id, turn_key, turn_index, user_text, \
                  agent_text, thread_id, created_at, doc_key",
        count: 10,
        skipped: &[],
    },
    Covered {
        table: "code_chunks",
        columns: "id, namespace, project_id, file_path, language, start_line, end_line, \
                  chunk_type, name, parent_scope, content, content_hash, indexed_at, doc_key",
        count: 14,
        skipped: &[],
    },
];

fn fill_checksums_v9(conn: &Connection) -> Result<()> {
    for covered in &CHECKSUMS_V9 {
        checksum::fill(conn, covered)?;
    }
    Ok(())
}

/// The version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Bring the schema up to date. Refuses a database written by a newer memcore.
pub fn migrate(conn: &mut Connection) -> Result<i64> {
    let latest = latest_version();
    loop {
        // Each step in its own write transaction that reads the version again
        // under SQLite's write lock: processes opening one store together apply
        // every step once, in order, whichever gets there first.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if current > latest {
            return Err(Error::invalid(
                "path",
                format!(
                    "This store has schema version {current}, newer than this memcore \
                     understands ({latest}). Upgrade memcore to open it."
                ),
            ));
        }
        let Some(step) = MIGRATIONS.iter().find(|m| m.version > current) else {
            return Ok(latest);
        };
        tx.execute_batch(step.sql)?;
        if let Some(fill) = step.fill {
            fill(&tx)?;
        }
        tx.pragma_update(None, "user_version", step.version)?;
        tx.commit()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrate_is_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, latest_version());
    }

    #[test]
    fn an_older_store_with_data_is_migrated_in_place() {
        let mut conn = Connection::open_in_memory().unwrap();
        // The schema of version 5, with a document's versions recorded under it.
        for step in MIGRATIONS.iter().filter(|m| m.version <= 5) {
            conn.execute_batch(step.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute_batch(
            "INSERT INTO documents(id, namespace, canonical, created_at)
                 VALUES ('doc_1', 'default', 'src/a.py', 1);
             INSERT INTO doc_versions(id, document_id, version, content_hash, provenance, created_at)
                 VALUES ('ver_1', 'doc_1', 1, 'h1', 'agent', 10),
                        ('ver_2', 'doc_1', 2, 'h2', 'external', 20);",
        )
        .unwrap();
        conn.execute_batch(
            "INSERT INTO document_conversations(document_id, conversation_id)
                 VALUES ('doc_1', 'c1'), ('doc_1', 'c2');",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        let externals: Vec<i64> = conn
            .prepare("SELECT externals FROM doc_versions ORDER BY version")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(externals, vec![0, 1]);
        let conversations: i64 = conn
            .query_row("SELECT conversations FROM documents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(conversations, 2);
    }

    #[test]
    fn version_9_covers_what_the_tables_verify() {
        let words = |s: &str| s.split(',').map(str::trim).collect::<Vec<_>>().join(",");
        for (frozen, now) in CHECKSUMS_V9.iter().zip(checksum::tables()) {
            assert_eq!(frozen.table, now.table);
            assert_eq!(words(frozen.columns), words(now.columns), "{}", now.table);
            assert_eq!(frozen.count, now.count, "{}", now.table);
            assert_eq!(frozen.count, words(now.columns).split(',').count());
            assert_eq!(frozen.skipped, now.skipped, "{}", now.table);
        }
    }

    #[test]
    fn a_store_without_checksums_gets_them_for_its_rows() {
        // A store of version 8, with a memory, a turn and a code chunk
        // written by memcore of that version; then migrated.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::store::DB_FILE);
        let mut conn = Connection::open(&path).unwrap();
        for step in MIGRATIONS.iter().filter(|m| m.version <= 8) {
            conn.execute_batch(step.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 8).unwrap();
        conn.execute_batch(
            "INSERT INTO memories(id, namespace, content, memory_type, source, confidence,
                 importance, metadata, created_at, updated_at, accessed_at, valid_from,
                 doc_key, tier)
                 VALUES ('mem_1', 'default', 'an old fact', 'semantic', 'explicit', 1.0, 0.5,
                         '{}', 10, 10, 10, 10, 1, 'durable');
             INSERT INTO conversations(namespace, id, created_at, updated_at)
                 VALUES ('default', 'c1', 20, 20);
             INSERT INTO turns(id, namespace, conversation_id, turn_key, turn_index,
                 user_text, created_at, doc_key)
                 VALUES ('turn_1', 'default', 'c1', 't1', 0, 'an old question', 20, 2);
             INSERT INTO code_chunks(id, namespace, project_id, file_path, language,
                 start_line, end_line, chunk_type, content, content_hash, indexed_at, doc_key)
                 VALUES ('chunk_1', 'default', 'p', 'a.rs', 'rust', 1, 2, 'function',
                         'fn a() {}', 'h', 30, 3);
             INSERT INTO oplog(seq, at, action, kind, record_id, namespace)
                 VALUES (1, 10, 1, 1, 'mem_1', 'default');",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        assert_eq!(checksum::mismatches(&conn, 10).unwrap(), []);
        // The checksum written at migration is the one a write computes.
        let m = crate::store::memories::get(&conn, "default", "mem_1")
            .unwrap()
            .unwrap();
        let stored: i64 = conn
            .query_row("SELECT checksum FROM memories", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, crate::store::memories::checksum(&m, 1));
        let t = crate::store::conversations::turn(&conn, "turn_1")
            .unwrap()
            .unwrap();
        let stored: i64 = conn
            .query_row("SELECT checksum FROM turns", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, crate::store::conversations::turn_checksum(&t, 2));
        // From here on the rows are guarded.
        conn.execute("UPDATE memories SET content = 'an old fict'", [])
            .unwrap();
        let err = crate::store::memories::get(&conn, "default", "mem_1").unwrap_err();
        assert!(matches!(err, Error::Damaged { .. }), "{err:?}");
        assert!(err.to_string().contains("mem_1"), "{err}");
    }

    #[test]
    fn stores_opened_together_migrate_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut conn = Connection::open(&path).unwrap();
                    conn.busy_timeout(std::time::Duration::from_secs(10))
                        .unwrap();
                    migrate(&mut conn)
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap().unwrap(), latest_version());
        }
    }

    #[test]
    fn newer_schema_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert_eq!(err.code(), "INVALID_PARAMETER");
    }
}
