//! The operation log in PostgreSQL: one entry per write, numbered per
//! namespace (docs/scale-out.md, "One order per namespace").
//!
//! A namespace's `seq` comes from its row in `memcore.log_heads`, incremented
//! inside the writer's transaction. The row stays locked until that
//! transaction ends, so the next writer of the namespace waits and then reads
//! the committed value: seqs are handed out in commit order, and a rollback
//! gives its number back. So a namespace's log has no gaps, and reading
//! "entries after the last one I applied" is exact. (A `SEQUENCE` would hand
//! out numbers at call time, not commit time, and burn them on rollback.)

use postgres::error::SqlState;
use postgres::{GenericClient, ToStatement};

use crate::error::{Error, Result};
use crate::temporal::Timestamp;

/// The channel every append notifies on commit; the payload is `"<seq> <namespace>"`.
pub const CHANNEL: &str = "memcore_log";

/// The layout of [`LogEntry::entry`] this build writes. Readers skip no
/// entry: an unknown format is for the applier to refuse, loudly.
pub const FORMAT: i16 = 1;

/// One logged write of one namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub namespace: String,
    pub seq: i64,
    /// The writer's clock when it appended, microseconds since the epoch.
    pub at: Timestamp,
    pub format: i16,
    /// What a node needs to apply the write, in the layout `format` names.
    pub entry: Vec<u8>,
}

/// Take `namespace`'s write lock for the rest of the transaction open on
/// `tx` (a [`postgres::Transaction`], or a client after `BEGIN`) and return
/// its head (the last seq written; 0 for a namespace never written). Until
/// the transaction ends no other writer can append to the namespace, so a
/// node can bring its own state up to the head before it decides what to
/// write.
pub fn lock_namespace(tx: &mut impl GenericClient, namespace: &str) -> Result<i64> {
    tx.execute(
        "INSERT INTO memcore.log_heads (namespace, seq) VALUES ($1, 0)
         ON CONFLICT (namespace) DO NOTHING",
        &[&namespace],
    )?;
    let row = tx.query_one(
        "SELECT seq FROM memcore.log_heads WHERE namespace = $1 FOR UPDATE",
        &[&namespace],
    )?;
    Ok(row.get(0))
}

/// Lock a namespace's head row without queueing ([`try_lock_namespace`]).
pub const LOCK_HEAD: &str =
    "SELECT seq FROM memcore.log_heads WHERE namespace = $1 FOR UPDATE NOWAIT";

/// One statement for the head's increment, the log row and the notification
/// ([`append`]): a third of the round trips of three statements.
pub const APPEND: &str = "WITH head AS (
         INSERT INTO memcore.log_heads (namespace, seq) VALUES ($1, 1)
         ON CONFLICT (namespace) DO UPDATE SET seq = memcore.log_heads.seq + 1
         RETURNING seq
     ), logged AS (
         INSERT INTO memcore.log (namespace, seq, at, format, entry)
         SELECT $1, seq, $2, $3, $4 FROM head
         RETURNING seq
     )
     SELECT seq, pg_notify($5, seq::text || ' ' || $1::text) FROM logged";

/// [`lock_namespace`] for a writer that must not queue: the head if the
/// lock was free, `None` if another transaction holds it. A namespace's very
/// first write makes its head row, which waits for another writer's
/// uncommitted first row; that wait is cut short the same way. A failed
/// attempt aborts `tx`.
///
/// `lock` is [`LOCK_HEAD`], as text or prepared once on the connection (a
/// query given as text is parsed again at every call: one more round trip).
pub fn try_lock_namespace<S: ToStatement + ?Sized>(
    tx: &mut impl GenericClient,
    lock: &S,
    namespace: &str,
) -> Result<Option<i64>> {
    let busy = |e: &postgres::Error| e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE);
    match tx.query_opt(lock, &[&namespace]) {
        Ok(Some(row)) => return Ok(Some(row.get(0))),
        Ok(None) => {}
        Err(e) if busy(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    tx.batch_execute("SET LOCAL lock_timeout = '100ms'")?;
    match tx.execute(
        "INSERT INTO memcore.log_heads (namespace, seq) VALUES ($1, 0)
         ON CONFLICT (namespace) DO NOTHING",
        &[&namespace],
    ) {
        Ok(_) => {}
        Err(e) if busy(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    // The rest of the write waits as long as any other (the connection's own).
    tx.batch_execute("SET LOCAL lock_timeout TO DEFAULT")?;
    match tx.query_opt(lock, &[&namespace]) {
        Ok(row) => Ok(row.map(|row| row.get(0))),
        Err(e) if busy(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Append one write's entry inside `tx`, the transaction that also writes
/// the write's rows, and return its seq. The notification goes out when `tx`
/// commits (and not at all if it rolls back).
pub fn append(
    tx: &mut impl GenericClient,
    namespace: &str,
    at: Timestamp,
    entry: &[u8],
) -> Result<i64> {
    append_with(tx, APPEND, namespace, at, entry)
}

/// [`append`] with [`APPEND`] given as text or prepared once on the
/// connection (a node's writes: one round trip less per write).
pub fn append_with<S: ToStatement + ?Sized>(
    tx: &mut impl GenericClient,
    statement: &S,
    namespace: &str,
    at: Timestamp,
    entry: &[u8],
) -> Result<i64> {
    let seq: i64 = tx
        .query_one(statement, &[&namespace, &at, &FORMAT, &entry, &CHANNEL])?
        .get(0);
    Ok(seq)
}

/// The entries of `namespace` after `after`, oldest first, at most `limit`.
/// Fails if they do not follow `after` one by one: the log has no gaps, so a
/// missing seq means entries were pruned below this reader (it must rebuild
/// from the tables) or the log was damaged, never a write still in flight.
pub fn read_after(
    client: &mut impl GenericClient,
    namespace: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<LogEntry>> {
    let rows = client.query(
        "SELECT seq, at, format, entry FROM memcore.log
         WHERE namespace = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        &[&namespace, &after, &(limit as i64)],
    )?;
    let mut entries = Vec::with_capacity(rows.len());
    for (expected, row) in (after + 1..).zip(rows) {
        let seq: i64 = row.get(0);
        if seq != expected {
            return Err(Error::Damaged {
                path: "memcore.log".into(),
                message: format!(
                    "The PostgreSQL operation log of namespace {namespace:?} jumps from seq \
                     {} to {seq}: entries were pruned below this node's position or lost. \
                     Rebuild the node from the tables.",
                    expected - 1
                ),
            });
        }
        entries.push(LogEntry {
            namespace: namespace.to_owned(),
            seq,
            at: row.get(1),
            format: row.get(2),
            entry: row.get(3),
        });
    }
    Ok(entries)
}

/// The last seq of each namespace: of `only` (missing ones are left out),
/// or of every namespace ever written when `only` is `None`.
pub fn heads(
    client: &mut impl GenericClient,
    only: Option<&[String]>,
) -> Result<Vec<(String, i64)>> {
    let rows = match only {
        Some(names) => client.query(
            "SELECT namespace, seq FROM memcore.log_heads WHERE namespace = ANY($1)",
            &[&names],
        )?,
        None => client.query("SELECT namespace, seq FROM memcore.log_heads", &[])?,
    };
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
