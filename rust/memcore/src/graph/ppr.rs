//! Personalized PageRank over the entity graph.
//!
//! The walk restarts at the seeds with probability `teleport` (0.5, HippoRAG's
//! choice: relevance should stay near the query's entities) and otherwise
//! follows a relation in either direction with probability proportional to
//! its weight. A node without live relations (dangling) sends its mass back
//! to the seeds, as igraph's PRPACK does for personalized PageRank.
//!
//! Forward push (Andersen, Chung & Lang) computes it locally: only nodes near
//! the seeds are touched, so the cost does not grow with the graph. When a
//! query would need more pushes than `max_pushes`, power iteration over the
//! whole graph takes over.

use super::{Direction, Graph, NodeId};
use crate::temporal::{Timestamp, ValidAt};

/// PPR parameters.
#[derive(Debug, Clone, Copy)]
pub struct PprParams {
    /// Restart probability (1 − damping).
    pub teleport: f32,
    /// Push while a node's residual exceeds `epsilon` × its weighted degree.
    pub epsilon: f32,
    /// Pushes before falling back to power iteration.
    pub max_pushes: usize,
    /// Which relations count (by validity).
    pub valid: ValidAt,
    pub now: Timestamp,
}

impl Default for PprParams {
    fn default() -> Self {
        PprParams {
            teleport: 0.5,
            epsilon: 1e-6,
            max_pushes: 500_000,
            valid: ValidAt::Now,
            now: 0,
        }
    }
}

/// PPR mass per node (sparse, best first). Seeds are `(node, weight)`;
/// weights are normalised; non-positive weights are ignored.
pub fn personalized_pagerank(
    graph: &Graph,
    seeds: &[(NodeId, f32)],
    params: &PprParams,
) -> Vec<(NodeId, f32)> {
    let reset = normalise(seeds);
    if reset.is_empty() {
        return Vec::new();
    }
    let scores = forward_push(graph, &reset, params)
        .unwrap_or_else(|| power_iteration(graph, &reset, params));
    let mut out: Vec<(NodeId, f32)> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s > 0.0)
        .map(|(i, s)| (i as NodeId, s))
        .collect();
    out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

fn normalise(seeds: &[(NodeId, f32)]) -> Vec<(NodeId, f32)> {
    let total: f32 = seeds.iter().filter(|(_, w)| *w > 0.0).map(|(_, w)| w).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    seeds
        .iter()
        .filter(|(_, w)| *w > 0.0)
        .map(|&(n, w)| (n, w / total))
        .collect()
}

/// Sum of the weights of a node's live relations, both directions.
fn weighted_degree(graph: &Graph, node: NodeId, params: &PprParams) -> f32 {
    graph
        .neighbors(node, Direction::Both)
        .filter(|&(e, _)| graph.edge(e).holds(params.valid, params.now))
        .map(|(e, _)| graph.edge(e).weight)
        .sum()
}

/// Spread `mass` from `node` over its live relations into `into`; returns
/// false when the node is dangling.
fn spread(graph: &Graph, node: NodeId, mass: f32, params: &PprParams, into: &mut [f32]) -> bool {
    let degree = weighted_degree(graph, node, params);
    if degree <= 0.0 {
        return false;
    }
    for (e, other) in graph.neighbors(node, Direction::Both) {
        let edge = graph.edge(e);
        if edge.holds(params.valid, params.now) {
            into[other as usize] += mass * edge.weight / degree;
        }
    }
    true
}

fn forward_push(graph: &Graph, reset: &[(NodeId, f32)], params: &PprParams) -> Option<Vec<f32>> {
    let n = graph.capacity();
    let alpha = params.teleport;
    let mut estimate = vec![0.0f32; n];
    let mut residual = vec![0.0f32; n];
    let mut queued = vec![false; n];
    // Weighted degrees, computed once per touched node (negative = unknown).
    let mut degrees = vec![-1.0f32; n];
    let mut degree = |node: NodeId| {
        let d = &mut degrees[node as usize];
        if *d < 0.0 {
            *d = weighted_degree(graph, node, params);
        }
        *d
    };
    let mut queue: Vec<NodeId> = Vec::new();
    for &(node, w) in reset {
        residual[node as usize] += w;
        if !queued[node as usize] {
            queued[node as usize] = true;
            queue.push(node);
        }
    }
    let mut pushes = 0usize;
    let mut wake: Vec<NodeId> = Vec::new();
    while let Some(node) = queue.pop() {
        let idx = node as usize;
        queued[idx] = false;
        let mass = residual[idx];
        let node_degree = degree(node);
        if mass <= params.epsilon * node_degree.max(1.0) {
            continue;
        }
        pushes += 1;
        if pushes > params.max_pushes {
            return None;
        }
        residual[idx] = 0.0;
        estimate[idx] += alpha * mass;
        let moving = (1.0 - alpha) * mass;
        wake.clear();
        if node_degree > 0.0 {
            for (e, other) in graph.neighbors(node, Direction::Both) {
                let edge = graph.edge(e);
                if edge.holds(params.valid, params.now) {
                    residual[other as usize] += moving * edge.weight / node_degree;
                    wake.push(other);
                }
            }
        } else {
            for &(seed, w) in reset {
                residual[seed as usize] += moving * w;
                wake.push(seed);
            }
        }
        for &other in &wake {
            let o = other as usize;
            if !queued[o] && residual[o] > params.epsilon * degree(other).max(1.0) {
                queued[o] = true;
                queue.push(other);
            }
        }
    }
    // What is still unpushed stays where it is: each residual is below
    // ε·degree, and the total mass is then exactly 1.
    for (e, r) in estimate.iter_mut().zip(&residual) {
        *e += r;
    }
    Some(estimate)
}

fn power_iteration(graph: &Graph, reset: &[(NodeId, f32)], params: &PprParams) -> Vec<f32> {
    let n = graph.capacity();
    let alpha = params.teleport;
    let mut x = vec![0.0f32; n];
    for &(node, w) in reset {
        x[node as usize] += w;
    }
    // f32 sums stop improving around 1e-7 of the total mass.
    for _ in 0..100 {
        let mut next = vec![0.0f32; n];
        let mut dangling = 0.0f32;
        for (u, &mass) in x.iter().enumerate() {
            if mass == 0.0 {
                continue;
            }
            if !spread(graph, u as NodeId, (1.0 - alpha) * mass, params, &mut next) {
                dangling += (1.0 - alpha) * mass;
            }
        }
        for &(node, w) in reset {
            next[node as usize] += alpha * w + dangling * w;
        }
        let change: f32 = next.iter().zip(&x).map(|(a, b)| (a - b).abs()).sum();
        x = next;
        if change < 1e-6 {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::super::tests::graph;
    use super::*;

    fn exact(params: &PprParams) -> PprParams {
        PprParams {
            epsilon: 1e-9,
            ..*params
        }
    }

    #[test]
    fn mass_sums_to_one_and_decays_with_distance() {
        // A path 0-1-2-3.
        let g = graph(4, &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)]);
        let params = exact(&PprParams::default());
        let scores = personalized_pagerank(&g, &[(0, 1.0)], &params);
        let total: f32 = scores.iter().map(|s| s.1).sum();
        assert!((total - 1.0).abs() < 1e-4, "{total}");
        let by_node: Vec<f32> = (0..4)
            .map(|n| scores.iter().find(|s| s.0 == n).map_or(0.0, |s| s.1))
            .collect();
        assert!(by_node[0] > by_node[1] && by_node[1] > by_node[2] && by_node[2] > by_node[3]);
    }

    #[test]
    fn push_and_power_iteration_agree() {
        let edges: Vec<(u32, u32, f32)> = (0..40u32)
            .map(|i| (i, (i * 7 + 3) % 40, 0.2 + (i % 5) as f32 * 0.2))
            .collect();
        let g = graph(41, &edges); // node 40 is isolated (dangling)
        let params = exact(&PprParams::default());
        let seeds = [(0, 2.0), (40, 1.0)];
        let push = forward_push(&g, &normalise(&seeds), &params).unwrap();
        let power = power_iteration(&g, &normalise(&seeds), &params);
        for (a, b) in push.iter().zip(&power) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        // The isolated seed (a third of the reset mass) also gets back a third
        // of its own dangling mass: r = 1/3 + r/6, so p = r/2 = 0.2.
        assert!((push[40] - 0.2).abs() < 1e-4, "{}", push[40]);
    }

    #[test]
    fn invalid_edges_are_not_walked() {
        let mut g = graph(3, &[(0, 1, 1.0)]);
        g.add_edge(super::super::Edge {
            relation_id: "old".into(),
            from: 0,
            to: 2,
            relation_type: "was".into(),
            weight: 1.0,
            valid_from: 0,
            valid_end: 10,
            alive: true,
        });
        let params = PprParams {
            now: 100,
            ..exact(&PprParams::default())
        };
        let scores = personalized_pagerank(&g, &[(0, 1.0)], &params);
        assert!(scores.iter().all(|s| s.0 != 2));
        let then = PprParams {
            valid: ValidAt::At(5),
            ..params
        };
        assert!(
            personalized_pagerank(&g, &[(0, 1.0)], &then)
                .iter()
                .any(|s| s.0 == 2)
        );
    }
}
