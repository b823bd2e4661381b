//! Breadth-first walks: entities within `depth` hops, and the shortest
//! relation path between two entities.

use std::collections::{HashMap, HashSet, VecDeque};

use super::{Direction, EdgeId, Graph, NodeId};
use crate::temporal::{Timestamp, ValidAt};

/// An entity reached by a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reached {
    pub node: NodeId,
    /// Hops from the start (1 = a direct neighbour).
    pub depth: usize,
    /// The relation it was first reached through, and the node before it.
    pub via: EdgeId,
    pub parent: NodeId,
}

/// Which relations a walk may follow.
#[derive(Debug, Clone, Copy)]
pub struct WalkFilter<'a> {
    pub direction: Direction,
    pub relation_type: Option<&'a str>,
    pub valid: ValidAt,
    pub now: Timestamp,
}

fn steps<'a>(
    graph: &'a Graph,
    node: NodeId,
    filter: &'a WalkFilter<'_>,
) -> impl Iterator<Item = (EdgeId, NodeId)> + 'a {
    graph
        .neighbors(node, filter.direction)
        .filter(move |&(e, _)| {
            let edge = graph.edge(e);
            edge.holds(filter.valid, filter.now)
                && filter
                    .relation_type
                    .is_none_or(|t| edge.relation_type.eq_ignore_ascii_case(t))
        })
}

/// Every entity within `depth` hops of `start`, nearest first (each once,
/// by its shortest route).
pub fn related(
    graph: &Graph,
    start: NodeId,
    depth: usize,
    filter: &WalkFilter<'_>,
) -> Vec<Reached> {
    let mut seen: HashSet<NodeId> = HashSet::from([start]);
    let mut out = Vec::new();
    let mut frontier = VecDeque::from([(start, 0usize)]);
    while let Some((node, d)) = frontier.pop_front() {
        if d == depth {
            continue;
        }
        for (edge, other) in steps(graph, node, filter) {
            if seen.insert(other) {
                out.push(Reached {
                    node: other,
                    depth: d + 1,
                    via: edge,
                    parent: node,
                });
                frontier.push_back((other, d + 1));
            }
        }
    }
    out
}

/// The shortest path from `from` to `to` (at most `max_depth` relations) as
/// the relations along it, in order; None when they are not connected.
pub fn shortest_path(
    graph: &Graph,
    from: NodeId,
    to: NodeId,
    max_depth: usize,
    filter: &WalkFilter<'_>,
) -> Option<Vec<EdgeId>> {
    if from == to {
        return Some(Vec::new());
    }
    let mut came_from: HashMap<NodeId, (NodeId, EdgeId)> = HashMap::new();
    let mut frontier = VecDeque::from([(from, 0usize)]);
    while let Some((node, d)) = frontier.pop_front() {
        if d == max_depth {
            continue;
        }
        for (edge, other) in steps(graph, node, filter) {
            if other == from || came_from.contains_key(&other) {
                continue;
            }
            came_from.insert(other, (node, edge));
            if other == to {
                let mut path = Vec::new();
                let mut at = to;
                while at != from {
                    let (prev, e) = came_from[&at];
                    path.push(e);
                    at = prev;
                }
                path.reverse();
                return Some(path);
            }
            frontier.push_back((other, d + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests::graph;
    use super::*;

    fn filter(direction: Direction) -> WalkFilter<'static> {
        WalkFilter {
            direction,
            relation_type: None,
            valid: ValidAt::Any,
            now: 0,
        }
    }

    #[test]
    fn related_respects_depth_and_direction() {
        // 0 -> 1 -> 2 -> 3, and 4 -> 0
        let g = graph(5, &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (4, 0, 1.0)]);
        let out: Vec<(NodeId, usize)> = related(&g, 0, 2, &filter(Direction::Out))
            .iter()
            .map(|r| (r.node, r.depth))
            .collect();
        assert_eq!(out, vec![(1, 1), (2, 2)]);
        let inn: Vec<NodeId> = related(&g, 0, 3, &filter(Direction::In))
            .iter()
            .map(|r| r.node)
            .collect();
        assert_eq!(inn, vec![4]);
        assert_eq!(related(&g, 0, 5, &filter(Direction::Both)).len(), 4);
    }

    #[test]
    fn shortest_path_follows_relations_either_way() {
        let g = graph(
            5,
            &[
                (0, 1, 1.0),
                (1, 2, 1.0),
                (3, 2, 1.0),
                (0, 4, 1.0),
                (4, 3, 1.0),
            ],
        );
        let path = shortest_path(&g, 0, 3, 6, &filter(Direction::Both)).unwrap();
        assert_eq!(path.len(), 2, "0-4-3");
        assert!(shortest_path(&g, 0, 3, 1, &filter(Direction::Both)).is_none());
        let g2 = graph(3, &[(0, 1, 1.0)]);
        assert!(shortest_path(&g2, 0, 2, 6, &filter(Direction::Both)).is_none());
    }
}
