//! The kinds of record that share the search indexes.
//!
//! Memories, observations, user turns and code chunks all live in one vector
//! index and one text index; the kind travels with each document so a search
//! can ask for one kind, several, or all.

use crate::error::{Error, Result};

/// A searchable record kind. The discriminant is what the store and the
/// indexes persist, so existing values must never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    Memory = 1,
    Observation = 2,
    UserTurn = 3,
    CodeChunk = 4,
    Entity = 5,
}

impl Kind {
    /// Every kind, in discriminant order.
    pub const ALL: [Kind; 5] = [
        Kind::Memory,
        Kind::Observation,
        Kind::UserTurn,
        Kind::CodeChunk,
        Kind::Entity,
    ];

    /// The public name (`"memory"`, `"user_turn"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::Observation => "observation",
            Kind::UserTurn => "user_turn",
            Kind::CodeChunk => "code_chunk",
            Kind::Entity => "entity",
        }
    }

    /// Parse a public name.
    pub fn parse(name: &str) -> Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "kind",
                    format!(
                        "Unknown kind '{name}'. Use one of: memory, observation, user_turn, \
                         code_chunk, entity."
                    ),
                )
            })
    }

    /// From the persisted discriminant.
    pub fn from_code(code: i64) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| *k as i64 == code)
    }

    /// Bit of this kind in a [`KindSet`].
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of kinds as a bit mask; cheap to test inside an index search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindSet(u8);

impl KindSet {
    /// Every kind.
    pub const ALL: KindSet = KindSet(0xFF);

    /// Exactly one kind.
    pub fn only(kind: Kind) -> Self {
        KindSet(kind.bit())
    }

    /// The given kinds.
    pub fn of(kinds: &[Kind]) -> Self {
        KindSet(kinds.iter().fold(0, |acc, k| acc | k.bit()))
    }

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: Kind) -> bool {
        self.0 & kind.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()).unwrap(), k);
            assert_eq!(Kind::from_code(k as i64), Some(k));
        }
        assert_eq!(Kind::parse("fact").unwrap_err().code(), "INVALID_PARAMETER");
    }

    #[test]
    fn kind_sets() {
        let s = KindSet::of(&[Kind::Memory, Kind::UserTurn]);
        assert!(s.contains(Kind::Memory) && s.contains(Kind::UserTurn));
        assert!(!s.contains(Kind::CodeChunk));
        assert!(KindSet::ALL.contains(Kind::Entity));
    }
}
