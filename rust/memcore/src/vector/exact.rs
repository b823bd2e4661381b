//! Exact scoring helpers shared by the pending buffer and the fallback path.

/// Dot product (the cosine, for the unit vectors the engine stores).
///
/// Eight independent accumulators over fixed-size chunks: the compiler turns
/// the inner loop into packed multiplies and adds (two 4-wide SSE lanes on the
/// baseline x86-64 target) without reassociating floating-point sums itself.
/// Indexing into `ChunksExact` slices kept it scalar, which made the exact
/// search path several times slower.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (chunks_a, tail_a) = a[..n].as_chunks::<8>();
    let (chunks_b, tail_b) = b[..n].as_chunks::<8>();
    let mut acc = [0.0f32; 8];
    for (ca, cb) in chunks_a.iter().zip(chunks_b) {
        for i in 0..8 {
            acc[i] += ca[i] * cb[i];
        }
    }
    let tail: f32 = tail_a.iter().zip(tail_b).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// The `k` best `(key, score)` pairs, best first (ties by key for determinism).
pub fn top_k(mut hits: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if hits.len() > k && k > 0 {
        hits.select_nth_unstable_by(k - 1, order);
        hits.truncate(k);
    }
    hits.sort_unstable_by(order);
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn top_k_orders_and_truncates() {
        let hits = vec![(1, 0.1), (2, 0.9), (3, 0.5), (4, 0.9)];
        assert_eq!(top_k(hits.clone(), 2), vec![(2, 0.9), (4, 0.9)]);
        assert_eq!(top_k(hits, 10).len(), 4);
    }
}
