//! Committed graph writes applied to the in-memory state: the graph, the
//! catalog and the index queue, under the writer lock, in commit order.

use std::sync::Arc;

use super::GraphChange;
use crate::engine::Engine;
use crate::engine::documents::{entity_labels, entity_node, observation_labels, relation_edge};
use crate::engine::indexes::Change;
use crate::knowledge::Entity;

impl Engine {
    /// Apply committed graph writes to the graph, catalog and index queue.
    pub(in crate::engine) fn apply_graph_changes(&self, changes: Vec<GraphChange>) {
        for change in changes {
            match change {
                GraphChange::Entity {
                    entity,
                    key,
                    prev,
                    vector,
                } => {
                    self.note_vector(vector.as_ref());
                    self.indexes
                        .graph
                        .write()
                        .add_node(entity_node(&entity, key as u64));
                    let text = Entity::document_text(
                        &entity.name,
                        &entity.entity_type,
                        entity.description.as_deref(),
                    );
                    self.publish(
                        key,
                        &Change::Upsert {
                            key: key as u64,
                            prev: prev.map(|p| p as u64),
                            labels: entity_labels(&entity),
                            text: &text,
                            vector: vector.map(Arc::from),
                        },
                    );
                }
                GraphChange::Observation {
                    observation,
                    key,
                    vector,
                } => {
                    self.note_vector(vector.as_ref());
                    {
                        let mut graph = self.indexes.graph.write();
                        if let Some(node) = graph.by_entity(&observation.entity_id) {
                            graph.link_doc(key as u64, vec![node], false);
                        }
                    }
                    self.publish(
                        key,
                        &Change::Upsert {
                            key: key as u64,
                            prev: None,
                            labels: observation_labels(&observation),
                            text: &observation.content,
                            vector: vector.map(Arc::from),
                        },
                    );
                }
                GraphChange::ObservationClosed {
                    observation,
                    seq,
                    key,
                } => self.publish(
                    seq,
                    &Change::Relabel {
                        key: key as u64,
                        labels: observation_labels(&observation),
                    },
                ),
                GraphChange::ObservationDeleted { seq, key } => {
                    self.indexes.graph.write().unlink_doc(key as u64);
                    self.publish(seq, &Change::Retire { key: key as u64 });
                }
                GraphChange::Relation(r) => {
                    let mut graph = self.indexes.graph.write();
                    if let Some(edge) = relation_edge(&graph, &r) {
                        graph.add_edge(edge);
                    }
                }
                GraphChange::RelationDeleted(id) => self.indexes.graph.write().remove_edge(&id),
                GraphChange::EntityDeleted {
                    entity_id,
                    seq,
                    keys,
                } => {
                    {
                        let mut graph = self.indexes.graph.write();
                        for k in &keys {
                            graph.unlink_doc(*k as u64);
                        }
                        if let Some(node) = graph.by_entity(&entity_id) {
                            graph.remove_node(node);
                        }
                    }
                    for k in keys {
                        self.publish(seq, &Change::Retire { key: k as u64 });
                    }
                }
                GraphChange::MemoryLinks {
                    doc_key,
                    prev,
                    entity_ids,
                } => {
                    let mut graph = self.indexes.graph.write();
                    if let Some(p) = prev {
                        graph.unlink_doc(p);
                    }
                    let nodes = entity_ids
                        .iter()
                        .filter_map(|id| graph.by_entity(id))
                        .collect();
                    graph.link_doc(doc_key, nodes, true);
                }
                GraphChange::Mention { doc_key, entity_id } => {
                    let mut graph = self.indexes.graph.write();
                    if let Some(node) = graph.by_entity(&entity_id) {
                        graph.add_doc_link(doc_key, node);
                    }
                }
            }
        }
    }

    fn note_vector(&self, vector: Option<&Vec<f32>>) {
        if let Some(v) = vector {
            self.note_dim(v.len());
        }
    }
}
