//! Record rules of the knowledge graph (docs/guide.md, "The knowledge-graph contract"), with the
//! wording agents see. Pure functions: no storage here.

/// Entity names: 1-100 characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Entity and relation types: 1-50 characters.
pub const MAX_TYPE_CHARS: usize = 50;
/// Observations: 5-150 characters.
pub const MIN_OBSERVATION_CHARS: usize = 5;
/// Observations: 5-150 characters.
pub const MAX_OBSERVATION_CHARS: usize = 150;
/// Observations: at most two sentences (one fact).
pub const MAX_SENTENCES: usize = 2;

/// Sentences in `text`. A sentence ends at `.`, `!` or `?` followed by
/// whitespace or the end of the text, so version numbers and file names
/// ("python-docx 1.2.0", "report.docx") are not counted as sentence breaks.
pub fn sentence_count(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut count = 0;
    let mut has_words = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '.' | '!' | '?') {
            let mut j = i;
            while j + 1 < chars.len() && matches!(chars[j + 1], '.' | '!' | '?') {
                j += 1;
            }
            let ends = j + 1 == chars.len() || chars[j + 1].is_whitespace();
            if ends && has_words {
                count += 1;
                has_words = false;
            }
            i = j + 1;
            continue;
        }
        if c.is_alphanumeric() {
            has_words = true;
        }
        i += 1;
    }
    count + usize::from(has_words)
}

/// Why an observation is not acceptable, in the contract's wording (docs/guide.md); None when fine.
pub fn observation_problem(text: &str) -> Option<(String, String)> {
    let chars = text.trim().chars().count();
    if chars > MAX_OBSERVATION_CHARS {
        return Some((
            format!(
                "Observation too long ({chars} chars). Max {MAX_OBSERVATION_CHARS}. Split into \
                 multiple observations."
            ),
            "Split it into several observations of one fact each.".to_owned(),
        ));
    }
    if chars < MIN_OBSERVATION_CHARS {
        return Some((
            format!(
                "Observation too short ({chars} chars). Min {MIN_OBSERVATION_CHARS}. Write one \
                 complete fact."
            ),
            "Write a complete statement such as 'Works at Google'.".to_owned(),
        ));
    }
    let sentences = sentence_count(text);
    if sentences > MAX_SENTENCES {
        return Some((
            format!(
                "Too many sentences ({sentences}). Max {MAX_SENTENCES}. One fact per observation."
            ),
            format!("Split it into {sentences} observations, one sentence each."),
        ));
    }
    None
}

/// Why an entity name is not acceptable; None when fine.
pub fn name_problem(name: &str) -> Option<String> {
    let chars = name.trim().chars().count();
    if chars == 0 {
        Some("Entity name is empty.".to_owned())
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some(format!(
            "Entity name too long ({} chars). Max {MAX_NAME_CHARS}.",
            name.chars().count()
        ))
    } else if name.chars().any(char::is_control) {
        Some("Entity name contains control characters.".to_owned())
    } else {
        None
    }
}

/// Why an entity or relation type is not acceptable; None when fine.
pub fn type_problem(kind: &str, value: &str) -> Option<String> {
    let chars = value.trim().chars().count();
    if chars == 0 {
        Some(format!("{kind} is empty."))
    } else if value.chars().count() > MAX_TYPE_CHARS {
        Some(format!(
            "{kind} too long ({} chars). Max {MAX_TYPE_CHARS}.",
            value.chars().count()
        ))
    } else {
        None
    }
}

/// An entity type with its first letter capitalised, and the warnings the
/// original deserves (lower-case start, spaces), each with a suggestion.
pub fn normalize_entity_type(entity: &str, value: &str) -> (String, Vec<String>) {
    let trimmed = value.trim();
    let mut warnings = Vec::new();
    let mut chars = trimmed.chars();
    let normalized = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
        None => String::new(),
    };
    if trimmed.chars().next().is_some_and(char::is_lowercase) {
        warnings.push(format!(
            "Entity '{entity}': entityType '{trimmed}' starts with a lowercase letter; saved as \
             '{normalized}'. Convention: start types with a capital letter."
        ));
    }
    if trimmed.contains(char::is_whitespace) {
        let suggestion: String = trimmed
            .split_whitespace()
            .map(|w| {
                let mut cs = w.chars();
                cs.next().map_or(String::new(), |f| {
                    f.to_uppercase()
                        .chain(cs.flat_map(char::to_lowercase))
                        .collect()
                })
            })
            .collect();
        warnings.push(format!(
            "Entity '{entity}': entityType '{trimmed}' contains spaces; consider '{suggestion}'."
        ));
    }
    (normalized, warnings)
}

/// Entity types agents use most, offered when a new type is a near miss of one.
pub const COMMON_ENTITY_TYPES: &[&str] = &[
    "Person",
    "Organization",
    "Company",
    "Team",
    "Project",
    "Product",
    "Service",
    "Tool",
    "Technology",
    "Library",
    "Framework",
    "Language",
    "File",
    "Document",
    "Place",
    "Location",
    "City",
    "Country",
    "Event",
    "Meeting",
    "Task",
    "Concept",
    "Topic",
    "Skill",
    "Preference",
    "Decision",
    "Goal",
];

/// The known type `value` is most likely a misspelling of: another type of
/// `known` within a small edit distance (one edit per four characters, at
/// least one), ignoring case; None when `value` is itself known or nothing is
/// that close. A free-text type stays allowed: this only feeds a warning.
pub fn closest_type<'a>(value: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted: Vec<char> = value.trim().to_lowercase().chars().collect();
    let allowed = (wanted.len() / 4).max(1);
    let mut best: Option<(usize, &str)> = None;
    for candidate in known {
        let other: Vec<char> = candidate.to_lowercase().chars().collect();
        if other == wanted {
            return None;
        }
        let distance = edit_distance(&wanted, &other);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, t)| t)
}

/// Levenshtein distance with adjacent transpositions (optimal string alignment).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut before: Vec<usize> = (0..=b.len()).collect();
    let mut previous = before.clone();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let substitution = previous[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            current[j] = substitution.min(previous[j] + 1).min(current[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                current[j] = current[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The case-insensitive key entity names are unique by.
pub fn name_key(name: &str) -> String {
    name.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_of_a_known_type_is_named() {
        let common = COMMON_ENTITY_TYPES.iter().copied();
        assert_eq!(closest_type("Persn", common.clone()), Some("Person"));
        assert_eq!(
            closest_type("Oragnization", common.clone()),
            Some("Organization")
        );
        assert_eq!(closest_type("Person", common.clone()), None, "itself");
        assert_eq!(
            closest_type("person", common.clone()),
            None,
            "case is no misspelling"
        );
        assert_eq!(
            closest_type("Recipe", common.clone()),
            None,
            "a type of its own"
        );
        assert_eq!(
            closest_type("Pet", common),
            None,
            "short types need an exact word"
        );
        assert_eq!(closest_type("ApiKye", ["ApiKey", "Person"]), Some("ApiKey"));
    }

    #[test]
    fn sentences_ignore_versions_and_file_names() {
        assert_eq!(sentence_count("Uses python-docx 1.2.0"), 1);
        assert_eq!(sentence_count("Final file: report-v4.docx"), 1);
        assert_eq!(sentence_count("One. Two! Three?"), 3);
        assert_eq!(sentence_count("Works at Google."), 1);
        assert_eq!(sentence_count("Wait... really?"), 2);
        assert_eq!(sentence_count(""), 0);
    }

    #[test]
    fn observation_messages_follow_the_seed() {
        let long = "x".repeat(165);
        assert_eq!(
            observation_problem(&long).unwrap().0,
            "Observation too long (165 chars). Max 150. Split into multiple observations."
        );
        assert!(observation_problem("Some fact").is_none());
        assert!(observation_problem("Hi").is_some());
        assert!(
            observation_problem("A is b. C is d. E is f.")
                .unwrap()
                .0
                .starts_with("Too many sentences (3)")
        );
    }

    #[test]
    fn entity_types_are_capitalised_with_warnings() {
        let (t, w) = normalize_entity_type("X", "person");
        assert_eq!(t, "Person");
        assert_eq!(w.len(), 1);
        let (t, w) = normalize_entity_type("X", "API Key");
        assert_eq!(t, "API Key");
        assert!(w[0].contains("'ApiKey'"), "{w:?}");
        let (_, w) = normalize_entity_type("X", "Document");
        assert!(w.is_empty());
    }
}
