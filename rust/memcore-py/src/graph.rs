//! Knowledge-graph operations on `Engine`. Requests arrive as plain dicts in
//! the `save_memory` contract's field names; entities, observations, relations,
//! views, pages and analytics leave as native records (`records/graph.rs`), the
//! save outcome as a dict the facade composes its contract-shaped result from.

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::RecallOptions;
use memcore::engine::{ObservationDraft, WriteContext};
use memcore::graph::Direction;
use memcore::knowledge::save::{EntityDraft, RelationDraft, SaveRequest};
use memcore::knowledge::{Entity, Relation};

use crate::arrays::owned_vector;
use crate::engine::PyEngine;
use crate::errors::{BindResult, InvalidParameterError, run};
use crate::memories::valid_at;
use crate::records::graph::{
    Analytics, EntityHit, EntityRecord, EntityView, GraphPage, GraphView, ObservationRecord,
    RelatedEntity, RelationRecord,
};
use crate::writes::run_write;

/// One relation of a request: `{targetEntity, relationType, importance?}`.
#[derive(FromPyObject)]
struct RelationArg {
    #[pyo3(item("targetEntity"))]
    target: String,
    #[pyo3(item("relationType"))]
    relation_type: String,
    #[pyo3(item, default)]
    importance: Option<f64>,
}

/// One entity of a request, plus the vectors the facade computed for it.
#[derive(FromPyObject)]
struct EntityArg<'py> {
    #[pyo3(item)]
    name: String,
    #[pyo3(item("entityType"))]
    entity_type: String,
    #[pyo3(item, default)]
    description: Option<String>,
    #[pyo3(item, default)]
    observations: Vec<String>,
    #[pyo3(item, default)]
    relations: Vec<RelationArg>,
    #[pyo3(item, default)]
    confidence: Option<f64>,
    #[pyo3(item, default)]
    importance: Option<f64>,
    #[pyo3(item, default)]
    vector: Option<PyReadonlyArray1<'py, f32>>,
    #[pyo3(item, default)]
    observation_vectors: Vec<Option<PyReadonlyArray1<'py, f32>>>,
}

/// Extract entity dicts, turning shape errors into INVALID_PARAMETER that
/// name the entity's position and the field.
fn entity_drafts(items: &[Bound<'_, PyAny>]) -> PyResult<Vec<EntityDraft>> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let arg: EntityArg<'_> = item.extract().map_err(|e: PyErr| {
                let err = InvalidParameterError::new_err(format!(
                    "entities[{i}] is malformed: {e}. Each entity needs name, entityType, \
                     observations and relations."
                ));
                Python::attach(|py| {
                    let d = PyDict::new(py);
                    let _ = d.set_item("field", format!("entities[{i}]"));
                    let _ = err.value(py).setattr("details", d);
                });
                err
            })?;
            Ok(EntityDraft {
                name: arg.name,
                entity_type: arg.entity_type,
                description: arg.description,
                observations: arg.observations,
                relations: arg
                    .relations
                    .into_iter()
                    .map(|r| RelationDraft {
                        target: r.target,
                        relation_type: r.relation_type,
                        importance: r.importance,
                    })
                    .collect(),
                confidence: arg.confidence,
                importance: arg.importance,
                embedding: owned_vector(arg.vector),
                observation_embeddings: arg
                    .observation_vectors
                    .into_iter()
                    .map(owned_vector)
                    .collect(),
            })
        })
        .collect()
}

fn view_records(
    py: Python<'_>,
    views: Vec<memcore::engine::EntityView>,
) -> PyResult<Vec<EntityView>> {
    views
        .into_iter()
        .map(|v| EntityView::from_core(py, v))
        .collect()
}

fn relation_records(rs: Vec<Relation>) -> Vec<RelationRecord> {
    rs.into_iter().map(RelationRecord::from).collect()
}

fn context(
    namespace: String,
    thread_id: Option<String>,
    confidence: Option<f64>,
    importance: Option<f64>,
) -> WriteContext {
    WriteContext {
        namespace,
        thread_id,
        confidence,
        importance,
    }
}

#[pymethods]
impl PyEngine {
    /// The text an entity is searched (and embedded) by.
    #[staticmethod]
    #[pyo3(signature = (name, entity_type, description = None))]
    fn entity_document_text(name: &str, entity_type: &str, description: Option<&str>) -> String {
        Entity::document_text(name, entity_type, description)
    }

    /// `save_memory`: entities with observations and relations, validated as
    /// a whole and written atomically. `strict=False` relaxes the "at least
    /// one observation and one relation" rule (reference-server semantics).
    ///
    /// Raises:
    ///     ValidationFailedError: Any rule broken; `details["problems"]` lists them all.
    #[pyo3(signature = (namespace, thread_id, entities, *, strict = true))]
    fn save_memory<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        thread_id: String,
        entities: Vec<Bound<'py, PyAny>>,
        strict: bool,
    ) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let request = SaveRequest {
            namespace,
            thread_id,
            entities: entity_drafts(&entities)?,
            require_links: strict,
        };
        let outcome = run_write(py, &engine, (), |()| engine.save_memory(&request))?;
        let d = PyDict::new(py);
        d.set_item("entities_created", outcome.entities_created)?;
        d.set_item("entities_updated", outcome.entities_updated)?;
        d.set_item("relations_created", outcome.relations_created)?;
        d.set_item("observations_created", outcome.observations_created)?;
        d.set_item("warnings", outcome.warnings)?;
        d.set_item("quality_score", outcome.quality_score)?;
        Ok(d)
    }

    /// New entities (existing names skipped), each with optional observations.
    #[pyo3(signature = (namespace, entities, *, thread_id = None))]
    fn create_entities<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        entities: Vec<Bound<'py, PyAny>>,
        thread_id: Option<String>,
    ) -> BindResult<Vec<EntityRecord>> {
        let engine = self.engine()?;
        let drafts = entity_drafts(&entities)?;
        let ctx = context(namespace, thread_id, None, None);
        let created = run_write(py, &engine, drafts, |drafts| {
            engine.create_entities(&ctx, drafts)
        })?;
        Ok(created.into_iter().map(EntityRecord::from).collect())
    }

    /// Relations `(from, to, relationType, importance or None)` between
    /// existing entities (duplicates skipped); returns those created.
    #[pyo3(signature = (namespace, relations, *, thread_id = None))]
    fn create_relations(
        &self,
        py: Python<'_>,
        namespace: String,
        relations: Vec<(String, String, String, Option<f64>)>,
        thread_id: Option<String>,
    ) -> BindResult<Vec<RelationRecord>> {
        let engine = self.engine()?;
        let drafts: Vec<(String, RelationDraft)> = relations
            .into_iter()
            .map(|(from, to, kind, importance)| {
                (
                    from,
                    RelationDraft {
                        target: to,
                        relation_type: kind,
                        importance,
                    },
                )
            })
            .collect();
        let ctx = context(namespace, thread_id, None, None);
        let created = run_write(py, &engine, (), |()| engine.create_relations(&ctx, &drafts))?;
        Ok(relation_records(created))
    }

    /// Append observations to an entity; with `supersedes`, the (single)
    /// content becomes the next version of that observation.
    #[pyo3(signature = (namespace, entity, contents, *, supersedes = None, vectors = None,
        thread_id = None, confidence = None, importance = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_observations<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        entity: &str,
        contents: Vec<String>,
        supersedes: Option<String>,
        vectors: Option<Vec<Option<PyReadonlyArray1<'py, f32>>>>,
        thread_id: Option<String>,
        confidence: Option<f64>,
        importance: Option<f64>,
    ) -> BindResult<Vec<ObservationRecord>> {
        let engine = self.engine()?;
        if supersedes.is_some() && contents.len() != 1 {
            return Err(InvalidParameterError::new_err(
                "supersedes replaces one observation: pass exactly one new content with it.",
            )
            .into());
        }
        let mut vectors = vectors.unwrap_or_default().into_iter();
        let drafts: Vec<ObservationDraft> = contents
            .into_iter()
            .map(|content| ObservationDraft {
                content,
                embedding: vectors.next().and_then(owned_vector),
                supersedes: supersedes.clone(),
            })
            .collect();
        let ctx = context(namespace, thread_id, confidence, importance);
        let created = run_write(py, &engine, (), |()| {
            engine.add_observations(&ctx, entity, &drafts)
        })?;
        Ok(created.into_iter().map(ObservationRecord::from).collect())
    }

    /// Delete entities by name with everything attached; returns the names deleted.
    fn delete_entities(
        &self,
        py: Python<'_>,
        namespace: &str,
        names: Vec<String>,
    ) -> BindResult<Vec<String>> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.delete_entities(namespace, &names)
        })
    }

    /// Delete an entity's observations, each given by id or exact content.
    fn delete_observations(
        &self,
        py: Python<'_>,
        namespace: &str,
        entity: &str,
        which: Vec<String>,
    ) -> BindResult<usize> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.delete_observations(namespace, entity, &which)
        })
    }

    /// Delete relations given as `(from, to, relationType)`; returns how many existed.
    fn delete_relations(
        &self,
        py: Python<'_>,
        namespace: &str,
        relations: Vec<(String, String, String)>,
    ) -> BindResult<usize> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.delete_relations(namespace, &relations)
        })
    }

    /// One entity with its current observations and relations.
    fn get_entity(&self, py: Python<'_>, namespace: &str, name: &str) -> BindResult<EntityView> {
        let engine = self.engine()?;
        let view = run(py, &engine, || engine.get_entity(namespace, name))?;
        Ok(EntityView::from_core(py, view)?)
    }

    /// Entities by name and the relations among them: `(entities, relations)`.
    fn open_nodes(
        &self,
        py: Python<'_>,
        namespace: &str,
        names: Vec<String>,
    ) -> BindResult<GraphView> {
        let engine = self.engine()?;
        let found = run(py, &engine, || engine.open_nodes(namespace, &names))?;
        Ok(GraphView::from_core(py, found)?)
    }

    /// A page of the graph; `summary` leaves observations out (counts only).
    #[pyo3(signature = (namespace, *, limit = 50, offset = 0, summary = false))]
    fn read_graph(
        &self,
        py: Python<'_>,
        namespace: &str,
        limit: usize,
        offset: usize,
        summary: bool,
    ) -> BindResult<GraphPage> {
        let engine = self.engine()?;
        let page = run(py, &engine, || {
            engine.read_graph(namespace, limit, offset, summary)
        })?;
        Ok(GraphPage::from_core(py, page, offset, summary)?)
    }

    /// Entities filtered by type, minimum importance and thread, most important first.
    #[pyo3(signature = (namespace, *, entity_type = None, min_importance = None, thread_id = None, limit = 50))]
    fn query_nodes(
        &self,
        py: Python<'_>,
        namespace: &str,
        entity_type: Option<&str>,
        min_importance: Option<f64>,
        thread_id: Option<&str>,
        limit: usize,
    ) -> BindResult<Vec<EntityView>> {
        let engine = self.engine()?;
        let found = run(py, &engine, || {
            engine.query_nodes(namespace, entity_type, min_importance, thread_id, limit)
        })?;
        Ok(view_records(py, found)?)
    }

    /// Entities within `depth` hops, nearest first, with the relation each was reached by.
    #[pyo3(signature = (namespace, name, *, depth = 2, direction = "both", relation_type = None,
        as_of = None, limit = 100))]
    #[allow(clippy::too_many_arguments)]
    fn get_related(
        &self,
        py: Python<'_>,
        namespace: &str,
        name: &str,
        depth: usize,
        direction: &str,
        relation_type: Option<&str>,
        as_of: Option<i64>,
        limit: usize,
    ) -> BindResult<Vec<RelatedEntity>> {
        let engine = self.engine()?;
        let direction = Direction::parse(direction)?;
        let valid = valid_at(as_of, true);
        let found = run(py, &engine, || {
            engine.get_related(
                namespace,
                name,
                depth,
                direction,
                relation_type,
                valid,
                limit,
            )
        })?;
        Ok(found
            .into_iter()
            .map(|r| RelatedEntity::from_core(py, r))
            .collect::<PyResult<_>>()?)
    }

    /// The shortest chain of relations between two entities (empty if unconnected).
    #[pyo3(signature = (namespace, source, target, *, max_depth = 6))]
    fn find_relation_path(
        &self,
        py: Python<'_>,
        namespace: &str,
        source: &str,
        target: &str,
        max_depth: usize,
    ) -> BindResult<Vec<RelationRecord>> {
        let engine = self.engine()?;
        let path = run(py, &engine, || {
            engine.find_relation_path(namespace, source, target, max_depth)
        })?;
        Ok(relation_records(path))
    }

    /// An observation's version chain, oldest first.
    fn observation_history(
        &self,
        py: Python<'_>,
        namespace: &str,
        entity: &str,
        observation_id: &str,
    ) -> BindResult<Vec<ObservationRecord>> {
        let engine = self.engine()?;
        let chain = run(py, &engine, || {
            engine.observation_history(namespace, entity, observation_id)
        })?;
        Ok(chain.into_iter().map(ObservationRecord::from).collect())
    }

    /// recent_changes, top_important, most_connected, orphaned_entities.
    #[pyo3(signature = (namespace, thread_id = None, *, limit = 10))]
    fn analytics(
        &self,
        py: Python<'_>,
        namespace: &str,
        thread_id: Option<&str>,
        limit: usize,
    ) -> BindResult<Analytics> {
        let engine = self.engine()?;
        let a = run(py, &engine, || {
            engine.analytics(namespace, thread_id, limit)
        })?;
        Ok(Analytics::from_core(py, a)?)
    }

    /// The live graph as arrays: ids/names/types lists, `sources`/`targets`
    /// (uint32) and `weights` (float32) numpy arrays, relation types.
    fn graph_arrays<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
    ) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let g = run(py, &engine, || engine.graph_arrays(namespace))?;
        let d = PyDict::new(py);
        d.set_item("entity_ids", g.entity_ids)?;
        d.set_item("names", g.names)?;
        d.set_item("entity_types", g.entity_types)?;
        d.set_item("importance", g.importance.into_pyarray(py))?;
        d.set_item("sources", g.sources.into_pyarray(py))?;
        d.set_item("targets", g.targets.into_pyarray(py))?;
        d.set_item("weights", g.weights.into_pyarray(py))?;
        d.set_item("relation_types", g.relation_types)?;
        Ok(d)
    }

    /// Personalized PageRank from `(entity name, weight)` seeds: `(name, mass)` best first.
    #[pyo3(signature = (namespace, seeds, *, teleport = 0.5, limit = 100))]
    fn personalized_pagerank(
        &self,
        py: Python<'_>,
        namespace: &str,
        seeds: Vec<(String, f32)>,
        teleport: f32,
        limit: usize,
    ) -> BindResult<Vec<(String, f32)>> {
        let engine = self.engine()?;
        run(py, &engine, || {
            engine.personalized_pagerank(namespace, &seeds, teleport, limit)
        })
    }

    /// Memory ↔ entity links: `(memory id, entity id, explicit)`.
    fn mentions(&self, py: Python<'_>, namespace: &str) -> BindResult<Vec<(String, String, bool)>> {
        let engine = self.engine()?;
        run(py, &engine, || engine.mentions(namespace))
    }

    /// Number of entities and relations in a namespace.
    fn count_graph(&self, py: Python<'_>, namespace: &str) -> BindResult<(i64, i64)> {
        let engine = self.engine()?;
        run(py, &engine, || engine.count_graph(namespace))
    }

    /// Hybrid search over entities and observations, one result per entity.
    #[pyo3(signature = (namespace, text, vector = None, *, limit = 10))]
    fn search_nodes<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        text: &str,
        vector: Option<PyReadonlyArray1<'py, f32>>,
        limit: usize,
    ) -> BindResult<Vec<EntityHit>> {
        let engine = self.engine()?;
        let q = owned_vector(vector);
        let found = run(py, &engine, || {
            engine.search_nodes(
                namespace,
                text,
                q.as_deref(),
                limit,
                &RecallOptions::default(),
            )
        })?;
        Ok(found
            .into_iter()
            .map(|hit| EntityHit::from_core(py, hit))
            .collect::<PyResult<_>>()?)
    }
}
