//! The log entry layout (rust/memcore/src/pg/entry.rs): what is written reads
//! back the same, and damaged bytes are a clear error, never a panic. (Here
//! rather than beside the code, so the feature's tests build only the test
//! binaries .ci/run already builds.)

use memcore::Kind;
use memcore::pg::entry::{Cell, Entry, EntryOp, EntryRow, EntryTable};
use memcore::store::oplog::Action;
use rusqlite::types::Value;

fn sample() -> Entry {
    Entry {
        ops: vec![EntryOp {
            action: Action::Upsert,
            kind: Kind::Memory,
            record_id: "mem_1".into(),
            retires_previous: true,
        }],
        tables: vec![EntryTable {
            name: "memories".into(),
            columns: vec!["id".into(), "doc_key".into(), "score".into(), "v".into()],
            key: vec!["id".into()],
        }],
        rows: vec![
            EntryRow {
                table: 0,
                key: vec![Value::Text("mem_1".into())],
                row: Some(vec![
                    Cell::Value(Value::Text("mem_1 é".into())),
                    Cell::KeyOfOp(0),
                    Cell::Value(Value::Real(0.25)),
                    Cell::Value(Value::Blob(vec![0, 255, 7])),
                ]),
            },
            EntryRow {
                table: 0,
                key: vec![Value::Text("mem_0".into())],
                row: None,
            },
            EntryRow {
                table: 0,
                key: vec![Value::Text("mem_2".into())],
                row: Some(vec![
                    Cell::Value(Value::Null),
                    Cell::KeyKept,
                    Cell::Value(Value::Integer(-3)),
                    Cell::Value(Value::Null),
                ]),
            },
        ],
    }
}

#[test]
fn an_entry_reads_back_as_written() {
    let entry = sample();
    assert_eq!(Entry::decode(&entry.encode()).unwrap(), entry);
    assert_eq!(
        Entry::decode(&Entry::default().encode()).unwrap(),
        Entry::default()
    );
}

#[test]
fn truncated_or_padded_bytes_are_damage_not_a_panic() {
    let bytes = sample().encode();
    for cut in 0..bytes.len() {
        let err = Entry::decode(&bytes[..cut]).unwrap_err();
        assert_eq!(err.code(), "STORAGE_ERROR");
    }
    let mut padded = bytes;
    padded.push(0);
    assert!(Entry::decode(&padded).is_err());
}
