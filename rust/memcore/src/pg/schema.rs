//! The PostgreSQL schema and its migrations (docs/scale-out.md, "Schema
//! versions and migrations").
//!
//! Everything lives in the schema `memcore`. `memcore.schema_version` holds
//! one row per applied step. Nodes that start together serialise on a
//! transaction-level advisory lock reserved for migrations, and each step runs
//! in one transaction with its version row, so a crash leaves the old schema
//! or the new one, never half of one. Steps are append-only, like the SQLite
//! ones in `store/schema.rs`: never edit a shipped step, add a new one.
//!
//! The record tables mirror the SQLite store's column for column (types:
//! INTEGER → bigint, REAL → double precision, TEXT → text, BLOB → bytea), less
//! `doc_key`, which names a searchable version in one node's own indexes and
//! so is not shared. Foreign keys are deferred to commit: a write's rows may
//! arrive in any order. `tests/pg_log.rs` checks the two schemas agree.

use postgres::Client;

use crate::error::{Error, Result};

/// One step: the version it produces and the SQL that gets there.
struct Migration {
    version: i32,
    sql: &'static str,
}

/// The advisory lock key migrations hold (an arbitrary constant: "memcore" in ASCII).
const MIGRATION_LOCK: i64 = 0x006d_656d_636f_7265;

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: r"
    -- The order of each namespace and its write lock: `seq` is the last one
    -- handed out. Writers increment it in their transaction, so seqs are given
    -- in commit order and a rollback gives its number back (no gaps).
    CREATE TABLE memcore.log_heads (
        namespace text PRIMARY KEY,
        seq       bigint NOT NULL CHECK (seq >= 0)
    );

    -- The operation log: one row per write. `entry` holds what a node needs
    -- to apply the write (its ops and row images), in the layout `format` names.
    CREATE TABLE memcore.log (
        namespace text     NOT NULL,
        seq       bigint   NOT NULL,
        at        bigint   NOT NULL,   -- the writer's clock, microseconds since the epoch
        format    smallint NOT NULL,
        entry     bytea    NOT NULL,
        PRIMARY KEY (namespace, seq)
    );

    CREATE TABLE memcore.meta (
        key   text PRIMARY KEY,
        value text NOT NULL
    );

    CREATE TABLE memcore.memories (
        id                  text PRIMARY KEY,
        namespace           text             NOT NULL,
        content             text             NOT NULL,
        memory_type         text             NOT NULL,
        source              text             NOT NULL,
        confidence          double precision NOT NULL,
        importance          double precision NOT NULL,
        metadata            text             NOT NULL,
        thread_id           text,
        user_id             text,
        event_time          bigint,
        created_at          bigint           NOT NULL,
        updated_at          bigint           NOT NULL,
        accessed_at         bigint           NOT NULL,
        valid_from          bigint           NOT NULL,
        valid_until         bigint,
        invalidated_at      bigint,
        invalidation_reason text,
        supersedes          text,
        superseded_by       text,
        expires_at          bigint,
        embedding           bytea
    );
    CREATE INDEX memories_by_namespace ON memcore.memories (namespace);

    CREATE TABLE memcore.entities (
        id          text PRIMARY KEY,
        namespace   text             NOT NULL,
        name        text             NOT NULL,
        name_key    text             NOT NULL,
        entity_type text             NOT NULL,
        description text,
        importance  double precision NOT NULL,
        confidence  double precision NOT NULL,
        thread_id   text,
        created_at  bigint           NOT NULL,
        updated_at  bigint           NOT NULL,
        valid_from  bigint           NOT NULL,
        valid_until bigint,
        embedding   bytea,
        UNIQUE (namespace, name_key) DEFERRABLE INITIALLY DEFERRED
    );

    CREATE TABLE memcore.observations (
        id            text PRIMARY KEY,
        namespace     text             NOT NULL,
        entity_id     text             NOT NULL REFERENCES memcore.entities (id)
                          ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        content       text             NOT NULL,
        version       bigint           NOT NULL,
        supersedes    text,
        superseded_by text,
        thread_id     text,
        confidence    double precision NOT NULL,
        importance    double precision NOT NULL,
        created_at    bigint           NOT NULL,
        valid_from    bigint           NOT NULL,
        valid_until   bigint,
        embedding     bytea
    );
    CREATE INDEX observations_by_entity ON memcore.observations (entity_id);

    CREATE TABLE memcore.relations (
        id            text PRIMARY KEY,
        namespace     text             NOT NULL,
        from_entity   text             NOT NULL REFERENCES memcore.entities (id)
                          ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        to_entity     text             NOT NULL REFERENCES memcore.entities (id)
                          ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        relation_type text             NOT NULL,
        importance    double precision NOT NULL,
        thread_id     text,
        created_at    bigint           NOT NULL,
        valid_from    bigint           NOT NULL,
        valid_until   bigint,
        UNIQUE (from_entity, to_entity, relation_type) DEFERRABLE INITIALLY DEFERRED
    );
    CREATE INDEX relations_by_target ON memcore.relations (to_entity);

    CREATE TABLE memcore.mentions (
        memory_id text   NOT NULL REFERENCES memcore.memories (id)
                      ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        entity_id text   NOT NULL REFERENCES memcore.entities (id)
                      ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        explicit  bigint NOT NULL,
        PRIMARY KEY (memory_id, entity_id)
    );
    CREATE INDEX mentions_by_entity ON memcore.mentions (entity_id);

    CREATE TABLE memcore.conversations (
        namespace   text   NOT NULL,
        id          text   NOT NULL,
        created_at  bigint NOT NULL,
        updated_at  bigint NOT NULL,
        last_hit_at bigint,
        archived_at bigint,
        PRIMARY KEY (namespace, id)
    );

    CREATE TABLE memcore.turns (
        id              text PRIMARY KEY,
        namespace       text   NOT NULL,
        conversation_id text   NOT NULL,
        turn_key        text   NOT NULL,
        turn_index      bigint NOT NULL,
        user_text       text   NOT NULL,
        agent_text      text,
        thread_id       text,
        created_at      bigint NOT NULL,
        embedding       bytea,
        UNIQUE (namespace, conversation_id, turn_key) DEFERRABLE INITIALLY DEFERRED
    );

    CREATE TABLE memcore.documents (
        id            text PRIMARY KEY,
        namespace     text   NOT NULL,
        canonical     text   NOT NULL,
        created_at    bigint NOT NULL,
        conversations bigint NOT NULL DEFAULT 0,
        UNIQUE (namespace, canonical) DEFERRABLE INITIALLY DEFERRED
    );

    CREATE TABLE memcore.doc_versions (
        id           text PRIMARY KEY,
        document_id  text   NOT NULL REFERENCES memcore.documents (id)
                         ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        version      bigint NOT NULL,
        content_hash text   NOT NULL,
        content      text,
        size         bigint,
        provenance   text   NOT NULL,
        turn_id      text,
        created_at   bigint NOT NULL,
        externals    bigint NOT NULL DEFAULT 0,
        UNIQUE (document_id, version) DEFERRABLE INITIALLY DEFERRED
    );

    CREATE TABLE memcore.procedures (
        id         text PRIMARY KEY,
        turn_id    text   NOT NULL REFERENCES memcore.turns (id)
                       ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        position   bigint NOT NULL,
        tool       text   NOT NULL,
        args       text   NOT NULL,
        created_at bigint NOT NULL
    );
    CREATE INDEX procedures_by_turn ON memcore.procedures (turn_id);

    CREATE TABLE memcore.procedure_documents (
        procedure_id text NOT NULL REFERENCES memcore.procedures (id)
                         ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        version_id   text NOT NULL REFERENCES memcore.doc_versions (id)
                         ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        PRIMARY KEY (procedure_id, version_id)
    );
    CREATE INDEX procedure_documents_by_version ON memcore.procedure_documents (version_id);

    CREATE TABLE memcore.projects (
        namespace     text   NOT NULL,
        id            text   NOT NULL,
        root          text   NOT NULL,
        status        text   NOT NULL,
        total_files   bigint NOT NULL DEFAULT 0,
        indexed_files bigint NOT NULL DEFAULT 0,
        total_chunks  bigint NOT NULL DEFAULT 0,
        started_at    bigint,
        completed_at  bigint,
        error         text,
        updated_at    bigint NOT NULL,
        PRIMARY KEY (namespace, id)
    );

    CREATE TABLE memcore.code_files (
        namespace    text   NOT NULL,
        project_id   text   NOT NULL,
        path         text   NOT NULL,
        content_hash text   NOT NULL,
        language     text,
        size         bigint,
        chunk_count  bigint NOT NULL,
        indexed_at   bigint NOT NULL,
        PRIMARY KEY (namespace, project_id, path)
    );

    CREATE TABLE memcore.code_chunks (
        id           text PRIMARY KEY,
        namespace    text   NOT NULL,
        project_id   text   NOT NULL,
        file_path    text   NOT NULL,
        language     text   NOT NULL,
        start_line   bigint NOT NULL,
        end_line     bigint NOT NULL,
        chunk_type   text   NOT NULL,
        name         text,
        parent_scope text,
        content      text   NOT NULL,
        content_hash text   NOT NULL,
        indexed_at   bigint NOT NULL,
        embedding    bytea
    );
    CREATE INDEX code_chunks_by_file ON memcore.code_chunks (namespace, project_id, file_path);

    CREATE TABLE memcore.document_touches (
        document_id     text   NOT NULL REFERENCES memcore.documents (id)
                            ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        turn_id         text   NOT NULL REFERENCES memcore.turns (id)
                            ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        conversation_id text   NOT NULL,
        at              bigint NOT NULL,
        PRIMARY KEY (document_id, turn_id)
    );

    CREATE TABLE memcore.document_conversations (
        document_id     text NOT NULL REFERENCES memcore.documents (id)
                            ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        conversation_id text NOT NULL,
        PRIMARY KEY (document_id, conversation_id)
    );
    ",
    },
    Migration {
        version: 2,
        // Every record table gets its namespace (INHERITED_NAMESPACE), so a
        // node serving a subset copies it with one `WHERE namespace` per
        // table, and a sharded deployment can distribute every table on it.
        // Existing rows take their parent's; procedures before
        // procedure_documents, which take theirs from them.
        sql: r"
    ALTER TABLE memcore.mentions ADD COLUMN namespace text;
    UPDATE memcore.mentions c SET namespace = p.namespace
        FROM memcore.memories p WHERE p.id = c.memory_id;
    ALTER TABLE memcore.mentions ALTER COLUMN namespace SET NOT NULL;

    ALTER TABLE memcore.doc_versions ADD COLUMN namespace text;
    UPDATE memcore.doc_versions c SET namespace = p.namespace
        FROM memcore.documents p WHERE p.id = c.document_id;
    ALTER TABLE memcore.doc_versions ALTER COLUMN namespace SET NOT NULL;

    ALTER TABLE memcore.procedures ADD COLUMN namespace text;
    UPDATE memcore.procedures c SET namespace = p.namespace
        FROM memcore.turns p WHERE p.id = c.turn_id;
    ALTER TABLE memcore.procedures ALTER COLUMN namespace SET NOT NULL;

    ALTER TABLE memcore.procedure_documents ADD COLUMN namespace text;
    UPDATE memcore.procedure_documents c SET namespace = p.namespace
        FROM memcore.procedures p WHERE p.id = c.procedure_id;
    ALTER TABLE memcore.procedure_documents ALTER COLUMN namespace SET NOT NULL;

    ALTER TABLE memcore.document_touches ADD COLUMN namespace text;
    UPDATE memcore.document_touches c SET namespace = p.namespace
        FROM memcore.documents p WHERE p.id = c.document_id;
    ALTER TABLE memcore.document_touches ALTER COLUMN namespace SET NOT NULL;

    ALTER TABLE memcore.document_conversations ADD COLUMN namespace text;
    UPDATE memcore.document_conversations c SET namespace = p.namespace
        FROM memcore.documents p WHERE p.id = c.document_id;
    ALTER TABLE memcore.document_conversations ALTER COLUMN namespace SET NOT NULL;
    ",
    },
    Migration {
        version: 3,
        // The automatic path: a fact's retention tier, memory_after_turn's
        // claims (shared, so a duplicate on another node is answered too)
        // and conversation summaries (SQLite's step 8).
        sql: r"
    ALTER TABLE memcore.memories ADD COLUMN tier text NOT NULL DEFAULT 'durable';

    CREATE TABLE memcore.turn_claims (
        namespace  text   NOT NULL,
        session_id text   NOT NULL,
        turn_id    text   NOT NULL,
        claimed_at bigint NOT NULL,
        done_at    bigint,
        result     text,
        PRIMARY KEY (namespace, session_id, turn_id)
    );

    CREATE TABLE memcore.conversation_summaries (
        namespace       text   NOT NULL,
        conversation_id text   NOT NULL,
        summary         text   NOT NULL,
        turns           bigint NOT NULL,
        refreshed_at    bigint NOT NULL,
        PRIMARY KEY (namespace, conversation_id)
    );
    ",
    },
];

/// The record tables that have no namespace column in the SQLite store
/// (a replica knows a child's namespace from its parent) but do in
/// PostgreSQL: `(table, foreign key column, parent table)`. Their rows are
/// written with the namespace of the parent row the key names
/// (`super::records`), parents first.
pub const INHERITED_NAMESPACE: &[(&str, &str, &str)] = &[
    ("mentions", "memory_id", "memories"),
    ("doc_versions", "document_id", "documents"),
    ("procedures", "turn_id", "turns"),
    ("procedure_documents", "procedure_id", "procedures"),
    ("document_touches", "document_id", "documents"),
    ("document_conversations", "document_id", "documents"),
];

/// The version this build writes.
pub fn latest_version() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Bring the schema up to date; returns the version now applied. Refuses a
/// database migrated by a newer memcore.
pub fn migrate(client: &mut Client) -> Result<i32> {
    migrate_to(client, latest_version())
}

/// Apply the steps up to `target` only: how tests build a database as an
/// older memcore left it, to migrate it from there.
#[doc(hidden)]
pub fn migrate_to(client: &mut Client, target: i32) -> Result<i32> {
    loop {
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
        tx.batch_execute(
            "CREATE SCHEMA IF NOT EXISTS memcore;
             CREATE TABLE IF NOT EXISTS memcore.schema_version (
                 version    integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             );",
        )?;
        let current: i32 = tx
            .query_one(
                "SELECT COALESCE(max(version), 0) FROM memcore.schema_version",
                &[],
            )?
            .get(0);
        if current > latest_version() {
            return Err(Error::invalid(
                "database_url",
                format!(
                    "This database has memcore schema version {current}; this memcore knows \
                     versions up to {}. Upgrade memcore to use it.",
                    latest_version()
                ),
            ));
        }
        let Some(step) = MIGRATIONS
            .iter()
            .find(|m| m.version > current && m.version <= target)
        else {
            tx.commit()?;
            return Ok(current);
        };
        tx.batch_execute(step.sql)?;
        tx.execute(
            "INSERT INTO memcore.schema_version (version) VALUES ($1)",
            &[&step.version],
        )?;
        tx.commit()?;
    }
}
