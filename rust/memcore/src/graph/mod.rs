//! The knowledge graph in memory: entities as dense node ids, relations as
//! weighted edges in per-node adjacency lists (cheap to update on every
//! write, local to walk for traversal and Personalized PageRank), and the
//! links from searchable documents (memories, observations) to entities.
//! Rebuilt from the store on open; updated by the write path.
//!
//! Each node's list holds compact [`Link`]s (neighbour, weight, validity)
//! rather than edge ids: the walks that dominate recall (PPR touches
//! thousands of nodes per query) then read one contiguous array per node
//! instead of chasing every edge into the edge table.

pub mod matcher;
pub mod ppr;
pub mod traverse;

use rustc_hash::FxHashMap as HashMap;

use crate::temporal::{Timestamp, ValidAt};
use matcher::NameMatcher;

/// Dense id of an entity in the graph (never reused).
pub type NodeId = u32;
/// Dense id of a relation in the graph (never reused).
pub type EdgeId = u32;

/// An entity as the graph sees it.
#[derive(Debug, Clone)]
pub struct Node {
    pub entity_id: String,
    pub namespace: String,
    pub name: String,
    pub entity_type: String,
    pub importance: f32,
    pub thread_id: Option<String>,
    /// Document key of the entity's own searchable text.
    pub doc_key: u64,
    pub alive: bool,
}

/// A relation as the graph sees it.
#[derive(Debug, Clone)]
pub struct Edge {
    pub relation_id: String,
    pub from: NodeId,
    pub to: NodeId,
    pub relation_type: String,
    pub weight: f32,
    pub valid_from: Timestamp,
    pub valid_end: Timestamp,
    pub alive: bool,
}

impl Edge {
    /// Whether the edge exists at the instant `valid` asks about.
    pub fn holds(&self, valid: ValidAt, now: Timestamp) -> bool {
        self.alive
            && match valid.instant(now) {
                None => true,
                Some(t) => self.valid_from <= t && t < self.valid_end,
            }
    }
}

/// One end's view of a live relation: what a walk needs, stored inline.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub edge: EdgeId,
    /// The node at the other end.
    pub other: NodeId,
    pub weight: f32,
    /// Whether the relation points away from this node.
    pub outgoing: bool,
    pub valid_from: Timestamp,
    pub valid_end: Timestamp,
}

impl Link {
    /// Whether the relation exists at `instant` (None: at any time).
    #[inline]
    pub fn holds_at(&self, instant: Option<Timestamp>) -> bool {
        instant.is_none_or(|t| self.valid_from <= t && t < self.valid_end)
    }
}

/// What all of a node's links have in common: their total weight and the
/// span of time in which every one of them holds. When a walk's instant falls
/// in that span (the usual case: open-ended relations, asked about now) the
/// node's weighted degree is the total, without visiting each link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSummary {
    pub weight: f32,
    /// The latest `valid_from` of the links.
    pub all_from: Timestamp,
    /// The earliest `valid_end` of the links.
    pub all_until: Timestamp,
}

impl Default for LinkSummary {
    fn default() -> Self {
        LinkSummary {
            weight: 0.0,
            all_from: Timestamp::MIN,
            all_until: Timestamp::MAX,
        }
    }
}

impl LinkSummary {
    fn of(links: &[Link]) -> Self {
        links.iter().fold(LinkSummary::default(), LinkSummary::with)
    }

    fn with(self, link: &Link) -> Self {
        LinkSummary {
            weight: self.weight + link.weight,
            all_from: self.all_from.max(link.valid_from),
            all_until: self.all_until.min(link.valid_end),
        }
    }

    /// Whether every link holds at `instant` (None: at any time).
    #[inline]
    pub fn all_hold_at(&self, instant: Option<Timestamp>) -> bool {
        instant.is_none_or(|t| self.all_from <= t && t < self.all_until)
    }
}

/// Which way to follow relations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Out,
    In,
    Both,
}

impl Direction {
    /// Parse `out` / `in` / `both` (also `outgoing` / `incoming`).
    pub fn parse(s: &str) -> crate::error::Result<Direction> {
        match s {
            "out" | "outgoing" => Ok(Direction::Out),
            "in" | "incoming" => Ok(Direction::In),
            "both" => Ok(Direction::Both),
            other => Err(crate::error::Error::invalid(
                "direction",
                format!("Unknown direction '{other}'. Use 'out', 'in' or 'both'."),
            )),
        }
    }
}

/// The whole in-memory graph.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    by_entity: HashMap<String, NodeId>,
    by_name: HashMap<(String, String), NodeId>,
    edges: Vec<Edge>,
    by_relation: HashMap<String, EdgeId>,
    /// Per node: its live relations, both directions, in insertion order.
    links: Vec<Vec<Link>>,
    /// Per node: the summary of its `links`, kept in step with them.
    summaries: Vec<LinkSummary>,
    /// Searchable document → entities it is about (memory mentions, an
    /// observation's entity).
    doc_entities: HashMap<u64, Vec<NodeId>>,
    /// Entity → memory documents mentioning it.
    mentioned_in: Vec<Vec<u64>>,
    matcher: NameMatcher,
    alive_nodes: usize,
    alive_edges: usize,
}

impl Graph {
    /// A node by id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// An edge by id.
    pub fn edge(&self, id: EdgeId) -> &Edge {
        &self.edges[id as usize]
    }

    /// Node slots (alive or not): the size of dense per-node arrays.
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    /// Live entities.
    pub fn node_count(&self) -> usize {
        self.alive_nodes
    }

    /// Live relations.
    pub fn edge_count(&self) -> usize {
        self.alive_edges
    }

    /// The node of an entity id.
    pub fn by_entity(&self, entity_id: &str) -> Option<NodeId> {
        self.by_entity.get(entity_id).copied()
    }

    /// The node of a name (case-insensitive) in a namespace.
    pub fn by_name(&self, namespace: &str, name: &str) -> Option<NodeId> {
        self.by_name
            .get(&(namespace.to_owned(), name.trim().to_lowercase()))
            .copied()
    }

    /// Every live node of a namespace.
    pub fn nodes_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = NodeId> + 'a {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.alive && n.namespace == namespace)
            .map(|(i, _)| i as NodeId)
    }

    /// Add (or revive) an entity.
    pub fn add_node(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.by_entity.get(&node.entity_id) {
            let old_doc = self.nodes[id as usize].doc_key;
            if old_doc != node.doc_key {
                self.doc_entities.remove(&old_doc);
                self.doc_entities.insert(node.doc_key, vec![id]);
            }
            let slot = &mut self.nodes[id as usize];
            slot.entity_type = node.entity_type;
            slot.importance = node.importance;
            slot.doc_key = node.doc_key;
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.by_entity.insert(node.entity_id.clone(), id);
        self.by_name.insert(
            (node.namespace.clone(), node.name.trim().to_lowercase()),
            id,
        );
        self.matcher.add(&node.name, id);
        // The entity's own document is "about" the entity.
        self.doc_entities.insert(node.doc_key, vec![id]);
        self.nodes.push(node);
        self.links.push(Vec::new());
        self.summaries.push(LinkSummary::default());
        self.mentioned_in.push(Vec::new());
        self.alive_nodes += 1;
        id
    }

    /// Remove an entity with its relations and document links.
    pub fn remove_node(&mut self, id: NodeId) {
        let idx = id as usize;
        if !self.nodes[idx].alive {
            return;
        }
        let touching: Vec<EdgeId> = self.links[idx].iter().map(|l| l.edge).collect();
        for e in touching {
            let relation_id = self.edges[e as usize].relation_id.clone();
            self.remove_edge(&relation_id);
        }
        let node = &mut self.nodes[idx];
        node.alive = false;
        self.doc_entities.remove(&node.doc_key);
        self.alive_nodes -= 1;
        self.by_entity.remove(&node.entity_id);
        self.by_name
            .remove(&(node.namespace.clone(), node.name.trim().to_lowercase()));
        self.matcher.remove(&node.name, id);
        // Memory mentions are unlinked here; the entity's observation
        // documents are retired (and unlinked) by the engine, which deletes them.
        for doc in std::mem::take(&mut self.mentioned_in[idx]) {
            if let Some(list) = self.doc_entities.get_mut(&doc) {
                list.retain(|n| *n != id);
                if list.is_empty() {
                    self.doc_entities.remove(&doc);
                }
            }
        }
    }

    /// Add a relation (ignored when its id is known or an end is missing).
    pub fn add_edge(&mut self, edge: Edge) {
        if self.by_relation.contains_key(&edge.relation_id) {
            return;
        }
        let id = self.edges.len() as EdgeId;
        self.by_relation.insert(edge.relation_id.clone(), id);
        let link = |other, outgoing| Link {
            edge: id,
            other,
            weight: edge.weight,
            outgoing,
            valid_from: edge.valid_from,
            valid_end: edge.valid_end,
        };
        for (at, other, outgoing) in [(edge.from, edge.to, true), (edge.to, edge.from, false)] {
            let l = link(other, outgoing);
            self.summaries[at as usize] = self.summaries[at as usize].with(&l);
            self.links[at as usize].push(l);
        }
        self.edges.push(edge);
        self.alive_edges += 1;
    }

    /// Remove a relation by id.
    pub fn remove_edge(&mut self, relation_id: &str) {
        let Some(id) = self.by_relation.remove(relation_id) else {
            return;
        };
        let edge = &mut self.edges[id as usize];
        edge.alive = false;
        let (from, to) = (edge.from as usize, edge.to as usize);
        for at in [from, to] {
            self.links[at].retain(|l| l.edge != id);
            self.summaries[at] = LinkSummary::of(&self.links[at]);
        }
        self.alive_edges -= 1;
    }

    /// Live edges at a node in a direction, with the node at the other end
    /// (outgoing ones first, each side in insertion order).
    pub fn neighbors(
        &self,
        node: NodeId,
        direction: Direction,
    ) -> impl Iterator<Item = (EdgeId, NodeId)> + '_ {
        let links = &self.links[node as usize];
        let side = move |outgoing: bool| {
            links
                .iter()
                .filter(move |l| l.outgoing == outgoing)
                .map(|l| (l.edge, l.other))
        };
        let out = matches!(direction, Direction::Out | Direction::Both).then(|| side(true));
        let inn = matches!(direction, Direction::In | Direction::Both).then(|| side(false));
        out.into_iter().flatten().chain(inn.into_iter().flatten())
    }

    /// A node's live relations, both directions, with weights and validity inline.
    #[inline]
    pub fn links(&self, node: NodeId) -> &[Link] {
        &self.links[node as usize]
    }

    /// The summary of a node's links (total weight, when all of them hold).
    #[inline]
    pub fn link_summary(&self, node: NodeId) -> LinkSummary {
        self.summaries[node as usize]
    }

    /// Link a searchable document to entities (replacing earlier links).
    /// `mention` marks memory mentions, which are also indexed the other way.
    pub fn link_doc(&mut self, doc_key: u64, entities: Vec<NodeId>, mention: bool) {
        self.unlink_doc(doc_key);
        if entities.is_empty() {
            return;
        }
        if mention {
            for &n in &entities {
                self.mentioned_in[n as usize].push(doc_key);
            }
        }
        self.doc_entities.insert(doc_key, entities);
    }

    /// Add one entity to a memory document's links (a mention found later).
    pub fn add_doc_link(&mut self, doc_key: u64, node: NodeId) {
        let list = self.doc_entities.entry(doc_key).or_default();
        if !list.contains(&node) {
            list.push(node);
            self.mentioned_in[node as usize].push(doc_key);
        }
    }

    /// Drop a document's links.
    pub fn unlink_doc(&mut self, doc_key: u64) {
        if let Some(old) = self.doc_entities.remove(&doc_key) {
            for n in old {
                self.mentioned_in[n as usize].retain(|d| *d != doc_key);
            }
        }
    }

    /// Entities a document is about.
    pub fn doc_entities(&self, doc_key: u64) -> &[NodeId] {
        self.doc_entities.get(&doc_key).map_or(&[], Vec::as_slice)
    }

    /// Memory documents mentioning an entity.
    pub fn mentioned_in(&self, node: NodeId) -> &[u64] {
        &self.mentioned_in[node as usize]
    }

    /// Live entities of `namespace` whose names occur in `text` as words.
    pub fn find_mentions(&self, namespace: &str, text: &str) -> Vec<NodeId> {
        if self.alive_nodes == 0 {
            return Vec::new();
        }
        self.matcher
            .find(text)
            .into_iter()
            .filter(|&n| {
                let node = &self.nodes[n as usize];
                node.alive && node.namespace == namespace
            })
            .collect()
    }

    /// Forget everything (a reset).
    pub fn clear(&mut self) {
        *self = Graph::default();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small graph: names `n0..n{count}` in namespace "ns", edges given as
    /// (from, to, weight).
    pub fn graph(count: usize, edges: &[(u32, u32, f32)]) -> Graph {
        let mut g = Graph::default();
        for i in 0..count {
            g.add_node(Node {
                entity_id: format!("ent_{i}"),
                namespace: "ns".into(),
                name: format!("n{i}"),
                entity_type: "Thing".into(),
                importance: 0.5,
                thread_id: None,
                doc_key: 1000 + i as u64,
                alive: true,
            });
        }
        for (k, &(from, to, weight)) in edges.iter().enumerate() {
            g.add_edge(Edge {
                relation_id: format!("rel_{k}"),
                from,
                to,
                relation_type: "links".into(),
                weight,
                valid_from: 0,
                valid_end: Timestamp::MAX,
                alive: true,
            });
        }
        g
    }

    #[test]
    fn nodes_edges_and_removal() {
        let mut g = graph(3, &[(0, 1, 1.0), (1, 2, 1.0)]);
        assert_eq!(g.edge_count(), 2);
        assert_eq!(g.neighbors(1, Direction::Both).count(), 2);
        assert_eq!(
            g.neighbors(1, Direction::Out)
                .map(|(_, n)| n)
                .collect::<Vec<_>>(),
            vec![2]
        );
        g.link_doc(7, vec![0, 2], true);
        assert_eq!(g.mentioned_in(2), &[7]);
        g.remove_node(1);
        assert_eq!(g.edge_count(), 0);
        assert_eq!(g.node_count(), 2);
        assert!(g.by_name("ns", "N1").is_none());
        g.remove_node(2);
        assert_eq!(g.doc_entities(7), &[0]);
    }

    #[test]
    fn link_summaries_follow_adds_removals_and_validity() {
        let mut g = graph(3, &[(0, 1, 2.0), (1, 2, 0.5)]);
        let weight = |g: &Graph, n| g.link_summary(n).weight;
        assert!((weight(&g, 1) - 2.5).abs() < 1e-6);
        assert!(g.link_summary(1).all_hold_at(Some(1_000)));
        g.add_edge(Edge {
            relation_id: "timed".into(),
            from: 1,
            to: 0,
            relation_type: "was".into(),
            weight: 1.0,
            valid_from: 10,
            valid_end: 20,
            alive: true,
        });
        let s = g.link_summary(1);
        assert!((s.weight - 3.5).abs() < 1e-6);
        assert_eq!((s.all_from, s.all_until), (10, 20));
        assert!(s.all_hold_at(Some(15)) && !s.all_hold_at(Some(20)) && s.all_hold_at(None));
        g.remove_edge("timed");
        assert_eq!(g.link_summary(1), LinkSummary::of(g.links(1)));
        assert!(g.link_summary(1).all_hold_at(Some(1_000)));
        g.remove_node(2);
        assert!((weight(&g, 1) - 2.0).abs() < 1e-6);
        assert_eq!(g.link_summary(2), LinkSummary::default());
    }

    #[test]
    fn mentions_are_namespaced() {
        let g = graph(2, &[]);
        assert_eq!(g.find_mentions("ns", "see n1 here"), vec![1]);
        assert!(g.find_mentions("other", "see n1 here").is_empty());
    }
}
