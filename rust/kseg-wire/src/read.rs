//! Checked big-endian reads: `None` when the bytes are not all there.

/// `N` bytes at `at`, or `None` if the slice is shorter.
#[inline(always)]
pub fn bytes<const N: usize>(buf: &[u8], at: usize) -> Option<[u8; N]> {
    let end = at.checked_add(N)?;
    buf.get(at..end)?.try_into().ok()
}

#[inline(always)]
pub fn i8_at(buf: &[u8], at: usize) -> Option<i8> {
    buf.get(at).map(|b| *b as i8)
}

#[inline(always)]
pub fn i16_at(buf: &[u8], at: usize) -> Option<i16> {
    bytes::<2>(buf, at).map(i16::from_be_bytes)
}

#[inline(always)]
pub fn i32_at(buf: &[u8], at: usize) -> Option<i32> {
    bytes::<4>(buf, at).map(i32::from_be_bytes)
}

#[inline(always)]
pub fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    bytes::<4>(buf, at).map(u32::from_be_bytes)
}

#[inline(always)]
pub fn i64_at(buf: &[u8], at: usize) -> Option<i64> {
    bytes::<8>(buf, at).map(i64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_the_end_are_none() {
        let buf = [0x80u8, 1, 2, 3, 4, 5, 6, 7];
        assert_eq!(i64_at(&buf, 0), Some(i64::from_be_bytes(buf)));
        assert_eq!(i64_at(&buf, 1), None);
        assert_eq!(i32_at(&buf, usize::MAX - 1), None);
        assert_eq!(i8_at(&buf, 0), Some(-128));
        assert_eq!(i8_at(&buf, 8), None);
        assert_eq!(i16_at(&buf, 7), None);
        assert_eq!(u32_at(&buf, 4), Some(0x04050607));
    }
}
