//! BLAKE2b (RFC 7693), unkeyed, with a chosen digest length: the same digest as Python's
//! `hashlib.blake2b(data, digest_size=n)`, so that the pure-Python path of `kseg diff`
//! (kseg/format/digest.py) computes exactly what the core computes. Written from the RFC's
//! description; tests compare it with the RFC's "abc" vector and hashlib's answers.

const IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

const SIGMA: [[usize; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const BLOCK: usize = 128;

#[inline(always)]
fn mix(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

fn compress(h: &mut [u64; 8], block: &[u8; BLOCK], counter: u128, last: bool) {
    let mut m = [0u64; 16];
    for (i, word) in m.iter_mut().enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&block[i * 8..i * 8 + 8]);
        *word = u64::from_le_bytes(bytes);
    }
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= counter as u64;
    v[13] ^= (counter >> 64) as u64;
    if last {
        v[14] = !v[14];
    }
    for round in 0..12 {
        let s = &SIGMA[round % 10];
        mix(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        mix(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        mix(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        mix(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        mix(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/// An incremental BLAKE2b of `N` digest bytes (1..=64).
pub struct Blake2b<const N: usize> {
    h: [u64; 8],
    block: [u8; BLOCK],
    filled: usize,
    counter: u128,
}

impl<const N: usize> Default for Blake2b<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Blake2b<N> {
    pub fn new() -> Self {
        assert!(N >= 1 && N <= 64, "BLAKE2b digests 1 to 64 bytes");
        let mut h = IV;
        h[0] ^= 0x0101_0000 ^ N as u64;
        Blake2b { h, block: [0; BLOCK], filled: 0, counter: 0 }
    }

    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.filled == BLOCK {
                // a full block is compressed only once more input follows: the last one is flagged
                self.counter += BLOCK as u128;
                compress(&mut self.h, &self.block, self.counter, false);
                self.filled = 0;
            }
            let take = (BLOCK - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
        }
    }

    pub fn finalize(mut self) -> [u8; N] {
        self.counter += self.filled as u128;
        self.block[self.filled..].fill(0);
        compress(&mut self.h, &self.block, self.counter, true);
        let mut full = [0u8; 64];
        for (i, word) in self.h.iter().enumerate() {
            full[i * 8..i * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&full[..N]);
        out
    }
}

/// `hashlib.blake2b(data, digest_size=16).digest()`.
pub fn blake2b_128(data: &[u8]) -> [u8; 16] {
    let mut state = Blake2b::<16>::new();
    state.update(data);
    state.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn rfc_7693_abc() {
        let mut state = Blake2b::<64>::new();
        state.update(b"abc");
        assert_eq!(
            hex(&state.finalize()),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1\
             7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
    }

    #[test]
    fn as_hashlib_at_block_edges() {
        // python3 -c "import hashlib; print(hashlib.blake2b(b'', digest_size=16).hexdigest())" etc.
        assert_eq!(hex(&blake2b_128(b"")), "cae66941d9efbd404e4d88758ea67670");
        let data: Vec<u8> = (0..=255u8).collect();
        assert_eq!(hex(&blake2b_128(&data[..128])), "a74787004ef589e31149183900d0294a");
        assert_eq!(hex(&blake2b_128(&data[..129])), "aaf1b0371f6d4ee49ee4fb5ddd9c49ef");
        assert_eq!(hex(&blake2b_128(&data)), "c2472c0ac37a8dbdb25f05ada0d82643");
        let mut split = Blake2b::<16>::new();
        split.update(&data[..3]);
        split.update(&data[3..200]);
        split.update(&data[200..]);
        assert_eq!(split.finalize(), blake2b_128(&data));
    }
}
