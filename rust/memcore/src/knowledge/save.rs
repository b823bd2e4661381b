//! The `save_memory` contract (docs/guide.md, "The knowledge-graph contract"): a request of entities, each
//! with observations and relations, validated as a whole. Any problem rejects
//! the whole request; each problem names the entity, the offending value, what
//! is wrong and how to fix it.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::rules::{self, name_key};
use crate::error::Error;
use crate::memory::validate_unit;

/// One relation in a request, from its entity to `target`.
#[derive(Debug, Clone, Default)]
pub struct RelationDraft {
    pub target: String,
    pub relation_type: String,
    pub importance: Option<f64>,
}

/// One entity in a request.
#[derive(Debug, Clone, Default)]
pub struct EntityDraft {
    pub name: String,
    pub entity_type: String,
    pub description: Option<String>,
    pub observations: Vec<String>,
    pub relations: Vec<RelationDraft>,
    pub confidence: Option<f64>,
    pub importance: Option<f64>,
    /// Embedding of the entity's document text (see `Entity::document_text`).
    pub embedding: Option<Vec<f32>>,
    /// One embedding per observation, in order (or empty).
    pub observation_embeddings: Vec<Option<Vec<f32>>>,
}

/// A whole `save_memory` request.
#[derive(Debug, Clone, Default)]
pub struct SaveRequest {
    pub namespace: String,
    pub thread_id: String,
    pub entities: Vec<EntityDraft>,
    /// Strict mode (save_memory): at least one observation and one relation
    /// per entity. The reference-server operations relax it.
    pub require_links: bool,
}

/// What `save_memory` did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SaveOutcome {
    pub entities_created: usize,
    pub entities_updated: usize,
    pub relations_created: usize,
    pub observations_created: usize,
    pub warnings: Vec<String>,
    pub quality_score: f64,
}

/// One validation problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub entity: Option<String>,
    /// The offending value (an observation, a relation target…).
    pub value: Option<Value>,
    pub problem: String,
    pub suggestion: String,
}

impl Problem {
    fn new(entity: Option<&str>, value: Option<Value>, problem: String, suggestion: &str) -> Self {
        Problem {
            entity: entity.map(str::to_owned),
            value,
            problem,
            suggestion: suggestion.to_owned(),
        }
    }

    /// The problem as a JSON object: `{entity, value, problem, suggestion}`.
    pub fn to_json(&self) -> Value {
        json!({
            "entity": self.entity,
            "value": self.value,
            "problem": self.problem,
            "suggestion": self.suggestion,
        })
    }
}

/// Problems into the one error the engine returns: the message leads with
/// the first problem, the details carry all of them.
pub fn rejection(problems: &[Problem]) -> Error {
    let first = problems
        .first()
        .map_or_else(String::new, |p| match &p.entity {
            Some(e) => format!("{} (entity '{e}')", p.problem),
            None => p.problem.clone(),
        });
    let more = match problems.len() {
        0 | 1 => String::new(),
        n => format!(" …and {} more problem(s); see details.", n - 1),
    };
    Error::ValidationFailed {
        message: format!("Validation failed: {first}.{more} Nothing was saved."),
        details: Value::Array(problems.iter().map(Problem::to_json).collect()),
    }
}

/// Check a request against every rule. `exists` says whether an entity name
/// (its lower-cased key) is already stored in the namespace. Returns the
/// problems (empty when valid).
pub fn validate(request: &SaveRequest, exists: &dyn Fn(&str) -> bool) -> Vec<Problem> {
    let mut problems = Vec::new();
    if request.thread_id.trim().is_empty() && request.require_links {
        problems.push(Problem::new(
            None,
            None,
            "threadId is empty.".into(),
            "Pass the id of the conversation or project this knowledge comes from.",
        ));
    }
    if request.entities.is_empty() {
        problems.push(Problem::new(
            None,
            None,
            "No entities given.".into(),
            "Pass at least one entity with observations and relations.",
        ));
    }
    let in_request: HashSet<String> = request.entities.iter().map(|e| name_key(&e.name)).collect();
    let mut seen = HashSet::new();
    for entity in &request.entities {
        check_entity(entity, request.require_links, &mut seen, &mut problems);
        for relation in &entity.relations {
            check_relation(entity, relation, &in_request, exists, &mut problems);
        }
    }
    problems
}

fn check_entity(
    entity: &EntityDraft,
    strict: bool,
    seen: &mut HashSet<String>,
    problems: &mut Vec<Problem>,
) {
    let name = entity.name.as_str();
    let who = Some(name);
    if let Some(p) = rules::name_problem(name) {
        problems.push(Problem::new(
            who,
            Some(json!(name)),
            p,
            "Use a short, unique name of 1-100 characters.",
        ));
    }
    if !seen.insert(name_key(name)) {
        problems.push(Problem::new(
            who,
            Some(json!(name)),
            format!("Entity '{name}' appears more than once in the request."),
            "Merge its observations and relations into one entry.",
        ));
    }
    if let Some(p) = rules::type_problem("entityType", &entity.entity_type) {
        problems.push(Problem::new(
            who,
            Some(json!(entity.entity_type)),
            p,
            "Use a short type such as Person, Document, Project or a domain type like Patient.",
        ));
    }
    for (field, value) in [
        ("confidence", entity.confidence),
        ("importance", entity.importance),
    ] {
        if let Some(v) = value
            && let Err(e) = validate_unit(field, v)
        {
            problems.push(Problem::new(who, Some(json!(v)), e.to_string(), "Use 0-1."));
        }
    }
    if strict && entity.observations.is_empty() {
        problems.push(Problem::new(
            who,
            None,
            format!("Entity '{name}' must have at least 1 observation"),
            "Add one atomic fact about it, e.g. 'Works at Google'.",
        ));
    }
    for observation in &entity.observations {
        if let Some((problem, suggestion)) = rules::observation_problem(observation) {
            problems.push(Problem::new(
                who,
                Some(json!(observation)),
                problem,
                &suggestion,
            ));
        }
    }
    if strict && entity.relations.is_empty() {
        problems.push(Problem::new(
            who,
            None,
            format!("Entity '{name}' must have at least 1 relation"),
            "Add relations to show connections, e.g. { targetEntity: 'Portfolio', relationType: \
             'updates' }.",
        ));
    }
}

fn check_relation(
    entity: &EntityDraft,
    relation: &RelationDraft,
    in_request: &HashSet<String>,
    exists: &dyn Fn(&str) -> bool,
    problems: &mut Vec<Problem>,
) {
    let who = Some(entity.name.as_str());
    let value = json!({"targetEntity": relation.target, "relationType": relation.relation_type});
    let target = name_key(&relation.target);
    if target.is_empty() {
        problems.push(Problem::new(
            who,
            Some(value.clone()),
            "Relation targetEntity is empty.".into(),
            "Name the entity this one is connected to.",
        ));
    } else if target == name_key(&entity.name) {
        problems.push(Problem::new(
            who,
            Some(value.clone()),
            format!("Entity '{}' cannot relate to itself.", entity.name),
            "Point the relation at another entity.",
        ));
    } else if !in_request.contains(&target) && !exists(&target) {
        problems.push(Problem::new(
            who,
            Some(value.clone()),
            format!("Target entity '{}' not found in request", relation.target),
            "targetEntity must reference another entity in the same save_memory call or one \
             already in memory.",
        ));
    }
    if let Some(p) = rules::type_problem("relationType", &relation.relation_type) {
        problems.push(Problem::new(
            who,
            Some(value.clone()),
            p,
            "Use a short verb phrase such as 'created', 'uses' or 'works on'.",
        ));
    }
    if let Some(v) = relation.importance
        && let Err(e) = validate_unit("importance", v)
    {
        problems.push(Problem::new(
            who,
            Some(value),
            e.to_string(),
            "Use 0-1 (default 0.7).",
        ));
    }
}

/// 0.5 × (share of entities with ≥ 1 relation) + 0.5 × min(1, mean relations
/// per entity / 2), over the entities of the request.
pub fn quality_score(request: &SaveRequest) -> f64 {
    let n = request.entities.len();
    if n == 0 {
        return 0.0;
    }
    let with_relation = request
        .entities
        .iter()
        .filter(|e| !e.relations.is_empty())
        .count();
    let relations: usize = request.entities.iter().map(|e| e.relations.len()).sum();
    let share = with_relation as f64 / n as f64;
    let mean = relations as f64 / n as f64;
    0.5 * share + 0.5 * (mean / 2.0).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(target: &str, kind: &str) -> RelationDraft {
        RelationDraft {
            target: target.into(),
            relation_type: kind.into(),
            importance: None,
        }
    }

    fn entity(name: &str, observations: &[&str], relations: Vec<RelationDraft>) -> EntityDraft {
        EntityDraft {
            name: name.into(),
            entity_type: "Person".into(),
            observations: observations.iter().map(|s| (*s).to_owned()).collect(),
            relations,
            ..EntityDraft::default()
        }
    }

    fn request(entities: Vec<EntityDraft>) -> SaveRequest {
        SaveRequest {
            namespace: "default".into(),
            thread_id: "t".into(),
            entities,
            require_links: true,
        }
    }

    #[test]
    fn the_seed_invalid_requests() {
        let long = "This is a very long observation that contains multiple facts and exceeds the \
                    maximum allowed length of 150 characters which will cause validation to fail";
        // The contract's example string is 153 characters (its comment says 165).
        assert_eq!(long.chars().count(), 153);
        let r = request(vec![entity("Test", &[long], vec![rel("Other", "related")])]);
        let problems = validate(&r, &|_| false);
        assert!(problems.iter().any(|p| p.problem
            == "Observation too long (153 chars). Max 150. Split into multiple observations."));
        assert!(
            problems
                .iter()
                .any(|p| p.problem == "Target entity 'Other' not found in request")
        );

        let r = request(vec![entity("Isolated Entity", &["Some fact"], vec![])]);
        let problems = validate(&r, &|_| false);
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].problem,
            "Entity 'Isolated Entity' must have at least 1 relation"
        );
        let err = rejection(&problems);
        assert_eq!(err.code(), "VALIDATION_FAILED");
    }

    #[test]
    fn existing_targets_are_accepted() {
        let r = request(vec![entity(
            "A",
            &["A fact here"],
            vec![rel("Known", "uses")],
        )]);
        assert!(validate(&r, &|k| k == "known").is_empty());
    }

    #[test]
    fn quality_score_of_the_seed_example_is_one() {
        let r = request(vec![
            entity(
                "Andrii",
                &["Works at Google"],
                vec![rel("P", "x"), rel("Q", "y")],
            ),
            entity(
                "P",
                &["Uses lxml 6.0.2"],
                vec![rel("Andrii", "x"), rel("Q", "y")],
            ),
            entity(
                "Q",
                &["Total 21 records"],
                vec![rel("P", "x"), rel("Andrii", "y")],
            ),
        ]);
        assert!(validate(&r, &|_| false).is_empty());
        assert!((quality_score(&r) - 1.0).abs() < 1e-9);
        let half = request(vec![
            entity("A", &["Fact one"], vec![rel("B", "x")]),
            entity("B", &["Fact two"], vec![]),
        ]);
        // share 0.5, mean 0.5 → 0.25 + 0.125
        assert!((quality_score(&half) - 0.375).abs() < 1e-9);
    }
}
