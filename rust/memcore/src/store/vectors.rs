//! Vectors at rest: little-endian f32 blobs, the same bytes on every platform.

/// Encode a vector as little-endian f32 bytes.
pub fn encode(vector: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vector.len() * 4);
    for x in vector {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Decode little-endian f32 bytes; a trailing partial value is ignored.
pub fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_is_exact() {
        let v = vec![0.0, -1.5, f32::MIN_POSITIVE, 3.25e7];
        let bytes = encode(&v);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[4..8], &(-1.5f32).to_le_bytes());
        assert_eq!(decode(&bytes), v);
    }
}
