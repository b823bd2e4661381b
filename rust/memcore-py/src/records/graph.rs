//! The knowledge graph: `EntityRecord`, `ObservationRecord`, `RelationRecord`,
//! and what the core returns around them (`EntityView`, `EntityHit`,
//! `RelatedEntity`, `GraphView`, `GraphPage`), and `get_analytics`' `Analytics`.

use pyo3::prelude::*;

use memcore::Scores as CoreScores;
use memcore::engine::{
    Analytics as CoreAnalytics, EntityView as CoreView, GraphPage as CorePage,
    GraphQuality as CoreQuality, RelatedEntity as CoreRelated,
};
use memcore::knowledge::{Entity, Observation, Relation};

use super::facts::Scores;
use super::{Flat, Records, Stamp, Strings, record};

record! {
    /// A node of the knowledge graph (a person, project, file, concept…).
    EntityRecord {
        id: String,
        namespace: String,
        name: String,
        entity_type: String,
        description: Option<String>,
        importance: f64,
        confidence: f64,
        thread_id: Option<String>,
        created_at: Stamp,
        updated_at: Stamp,
        valid_from: Stamp,
        valid_until: Option<Stamp>,
    }
}

impl From<Entity> for EntityRecord {
    fn from(e: Entity) -> Self {
        Self {
            id: e.id,
            namespace: e.namespace,
            name: e.name,
            entity_type: e.entity_type,
            description: e.description,
            importance: e.importance,
            confidence: e.confidence,
            thread_id: e.thread_id,
            created_at: Stamp(e.created_at),
            updated_at: Stamp(e.updated_at),
            valid_from: Stamp(e.valid_from),
            valid_until: e.valid_until.map(Stamp),
        }
    }
}

record! {
    /// One atomic fact about an entity, in a version chain (`supersedes`/`superseded_by`).
    ObservationRecord {
        id: String,
        namespace: String,
        entity_id: String,
        entity_name: String,
        content: String,
        version: i64,
        supersedes: Option<String>,
        superseded_by: Option<String>,
        thread_id: Option<String>,
        confidence: f64,
        importance: f64,
        timestamp: Stamp,
        valid_from: Stamp,
        valid_until: Option<Stamp>,
    }
}

impl From<Observation> for ObservationRecord {
    fn from(o: Observation) -> Self {
        Self {
            id: o.id,
            namespace: o.namespace,
            entity_id: o.entity_id,
            entity_name: o.entity_name,
            content: o.content,
            version: o.version,
            supersedes: o.supersedes,
            superseded_by: o.superseded_by,
            thread_id: o.thread_id,
            confidence: o.confidence,
            importance: o.importance,
            timestamp: Stamp(o.created_at),
            valid_from: Stamp(o.valid_from),
            valid_until: o.valid_until.map(Stamp),
        }
    }
}

#[pymethods]
impl ObservationRecord {
    /// Whether this is the latest version (not superseded).
    #[getter]
    fn is_current(&self) -> bool {
        self.superseded_by.is_none()
    }
}

record! {
    /// A directed, typed, weighted edge. `from_name`/`to_name` are entity names
    /// (`from`/`to` in `to_dict()`, as in the reference server); `from_entity`/`to_entity`
    /// are entity ids.
    RelationRecord {
        id: String,
        namespace: String,
        from_name as "from": String,
        to_name as "to": String,
        from_entity: String,
        to_entity: String,
        relation_type: String,
        importance: f64,
        thread_id: Option<String>,
        created_at: Stamp,
        valid_from: Stamp,
        valid_until: Option<Stamp>,
    }
}

impl From<Relation> for RelationRecord {
    fn from(r: Relation) -> Self {
        Self {
            id: r.id,
            namespace: r.namespace,
            from_name: r.from_name,
            to_name: r.to_name,
            from_entity: r.from_entity,
            to_entity: r.to_entity,
            relation_type: r.relation_type,
            importance: r.importance,
            thread_id: r.thread_id,
            created_at: Stamp(r.created_at),
            valid_from: Stamp(r.valid_from),
            valid_until: r.valid_until.map(Stamp),
        }
    }
}

record! {
    /// An entity with its current observations (empty in summary reads; the count is
    /// always there) and every relation it takes part in.
    EntityView {
        entity: Flat<EntityRecord>,
        observations: Records<ObservationRecord>,
        observation_count: usize,
        relations: Records<RelationRecord>,
    }
}

impl EntityView {
    pub fn from_core(py: Python<'_>, v: CoreView) -> PyResult<Self> {
        Ok(Self {
            entity: Flat(Py::new(py, EntityRecord::from(v.entity))?),
            observations: Records::new(
                py,
                v.observations.into_iter().map(ObservationRecord::from),
            )?,
            observation_count: v.observation_count,
            relations: Records::new(py, v.relations.into_iter().map(RelationRecord::from))?,
        })
    }
}

#[pymethods]
impl EntityView {
    /// The entity's name.
    #[getter]
    fn name(&self) -> String {
        self.entity.0.get().name.clone()
    }
}

record! {
    /// An entity found by `search_nodes`, with the scores of its best-matching document.
    EntityHit {
        view: Flat<EntityView>,
        scores: Py<Scores>,
    }
}

impl EntityHit {
    pub fn from_core(py: Python<'_>, (view, scores): (CoreView, CoreScores)) -> PyResult<Self> {
        Ok(Self {
            view: Flat(Py::new(py, EntityView::from_core(py, view)?)?),
            scores: Py::new(py, Scores::from(scores))?,
        })
    }
}

#[pymethods]
impl EntityHit {
    /// The entity's name.
    #[getter]
    fn name(&self) -> String {
        self.view.0.get().entity.0.get().name.clone()
    }
}

record! {
    /// An entity reached by `get_related`: how deep, through which relation, from whom.
    RelatedEntity {
        entity: Flat<EntityRecord>,
        depth: usize,
        via: Py<RelationRecord>,
        parent: String,
    }
}

impl RelatedEntity {
    pub fn from_core(py: Python<'_>, r: CoreRelated) -> PyResult<Self> {
        Ok(Self {
            entity: Flat(Py::new(py, EntityRecord::from(r.entity))?),
            depth: r.depth,
            via: Py::new(py, RelationRecord::from(r.via))?,
            parent: r.parent,
        })
    }
}

#[pymethods]
impl RelatedEntity {
    /// The entity's name.
    #[getter]
    fn name(&self) -> String {
        self.entity.0.get().name.clone()
    }
}

record! {
    /// Entities and the relations among them (`open_nodes`).
    GraphView {
        entities: Records<EntityView>,
        relations: Records<RelationRecord>,
    }
}

impl GraphView {
    pub fn from_core(
        py: Python<'_>,
        (views, relations): (Vec<CoreView>, Vec<Relation>),
    ) -> PyResult<Self> {
        Ok(Self {
            entities: Records::try_new(
                py,
                views.into_iter().map(|v| EntityView::from_core(py, v)),
            )?,
            relations: Records::new(py, relations.into_iter().map(RelationRecord::from))?,
        })
    }
}

record! {
    /// A page of `read_graph`: entities oldest first, the relations among them, the
    /// namespace's totals, and the offset of the next page (None on the last one).
    GraphPage {
        entities: Records<EntityView>,
        relations: Records<RelationRecord>,
        total_entities: i64,
        total_relations: i64,
        offset: usize,
        next_offset: Option<usize>,
        summary: bool,
    }
}

impl GraphPage {
    /// The page the core read from `offset`, with `summary` as asked.
    pub fn from_core(
        py: Python<'_>,
        page: CorePage,
        offset: usize,
        summary: bool,
    ) -> PyResult<Self> {
        let end = offset + page.entities.len();
        let more = i64::try_from(end).is_ok_and(|end| end < page.total_entities);
        let next_offset = (!page.entities.is_empty() && more).then_some(end);
        Ok(Self {
            entities: Records::try_new(
                py,
                page.entities
                    .into_iter()
                    .map(|v| EntityView::from_core(py, v)),
            )?,
            relations: Records::new(py, page.relations.into_iter().map(RelationRecord::from))?,
            total_entities: page.total_entities,
            total_relations: page.total_relations,
            offset,
            next_offset,
            summary,
        })
    }
}

// -- analytics: camelCase keys in `to_dict()`, the contract's field names ------------------

record! {
    /// `{entityName, entityType, lastModified, changeType}`.
    RecentChange {
        entity_name as "entityName": String,
        entity_type as "entityType": String,
        last_modified as "lastModified": Stamp,
        change_type as "changeType": String,
    }
}

record! {
    /// `{entityName, entityType, importance, observationCount}`.
    ImportantEntity {
        entity_name as "entityName": String,
        entity_type as "entityType": String,
        importance: f64,
        observation_count as "observationCount": usize,
    }
}

record! {
    /// `{entityName, entityType, relationCount, connectedTo}`.
    ConnectedEntity {
        entity_name as "entityName": String,
        entity_type as "entityType": String,
        relation_count as "relationCount": usize,
        connected_to as "connectedTo": Strings,
    }
}

record! {
    /// `{entityName, entityType, reason}`; reason is no_relations or broken_relation.
    OrphanedEntity {
        entity_name as "entityName": String,
        entity_type as "entityType": String,
        reason: String,
    }
}

record! {
    /// The knowledge graph's success metrics in one scope (`get_analytics`): relation
    /// coverage, mean relations per entity, observation atomicity, and the
    /// `save_memory` validation error rate of this process.
    GraphQuality {
        entities: usize,
        entities_with_relations: usize,
        relation_coverage: f64,
        mean_relations_per_entity: f64,
        observations: usize,
        atomic_observations: usize,
        observation_atomicity: f64,
        save_calls: u64,
        save_error_rate: f64,
    }
}

impl From<CoreQuality> for GraphQuality {
    fn from(q: CoreQuality) -> Self {
        Self {
            entities: q.entities,
            entities_with_relations: q.entities_with_relations,
            relation_coverage: q.relation_coverage,
            mean_relations_per_entity: q.mean_relations_per_entity,
            observations: q.observations,
            atomic_observations: q.atomic_observations,
            observation_atomicity: q.observation_atomicity,
            save_calls: q.save_calls,
            save_error_rate: q.save_error_rate,
        }
    }
}

record! {
    /// The analytics of `get_analytics` (a thread's, or the namespace's), with the
    /// success metrics of that scope (`quality`) and, for a thread, of the namespace.
    Analytics {
        recent_changes: Records<RecentChange>,
        top_important: Records<ImportantEntity>,
        most_connected: Records<ConnectedEntity>,
        orphaned_entities: Records<OrphanedEntity>,
        quality: Py<GraphQuality>,
        store_quality: Option<Py<GraphQuality>>,
    }
}

impl Analytics {
    pub fn from_core(py: Python<'_>, a: CoreAnalytics) -> PyResult<Self> {
        Ok(Self {
            recent_changes: Records::new(
                py,
                a.recent_changes.into_iter().map(|c| RecentChange {
                    last_modified: Stamp(c.entity.updated_at),
                    entity_name: c.entity.name,
                    entity_type: c.entity.entity_type,
                    change_type: c.change_type.to_owned(),
                }),
            )?,
            top_important: Records::new(
                py,
                a.top_important
                    .into_iter()
                    .map(|(e, count)| ImportantEntity {
                        entity_name: e.name,
                        entity_type: e.entity_type,
                        importance: e.importance,
                        observation_count: count,
                    }),
            )?,
            most_connected: Records::new(
                py,
                a.most_connected.into_iter().map(|c| ConnectedEntity {
                    entity_name: c.entity.name,
                    entity_type: c.entity.entity_type,
                    relation_count: c.relation_count,
                    connected_to: Strings(c.connected_to),
                }),
            )?,
            orphaned_entities: Records::new(
                py,
                a.orphaned.into_iter().map(|(e, reason)| OrphanedEntity {
                    entity_name: e.name,
                    entity_type: e.entity_type,
                    reason: reason.to_owned(),
                }),
            )?,
            quality: Py::new(py, GraphQuality::from(a.quality))?,
            store_quality: a
                .store_quality
                .map(|q| Py::new(py, GraphQuality::from(q)))
                .transpose()?,
        })
    }
}
