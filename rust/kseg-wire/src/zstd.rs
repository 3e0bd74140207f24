//! The walk over a zstd stream's frames (RFC 8878 section 3.1) that `kseg/format/compression/zstd.py`
//! does before decoding: where each frame lies, block by block, without decoding anything. The
//! Python walk (`_zstd_walk_frame`) is the reference; this one runs it over a whole batch in one
//! call, so a batch of a million skippable or empty frames costs no Python per frame.
//!
//! Skippable frames (magic 0x184D2A50..5F) and *empty* frames (below) are walked and dropped: only
//! the frames libzstd must decode come back. An empty frame is one that decodes to nothing whatever
//! decoder reads it: zstd's frame for empty input, or the streaming writer's with no content size --
//! the reserved bit clear, no dictionary id, no checksum, a content size absent or 0, a window of at
//! most [`EMPTY_WINDOW_MAX`] (or a single segment), and one block: last, raw, size 0.

/// 0xFD2FB528 little-endian.
const MAGIC: u32 = 0xFD2F_B528;
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
const SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
/// `EMPTY_WINDOW_MAX` in zstd.py: the largest window of a frame taken as empty without decoding.
pub const EMPTY_WINDOW_MAX: u64 = 8 << 20;
const FCS_SIZES: [usize; 4] = [0, 2, 4, 8];
const DICT_ID_SIZES: [usize; 4] = [0, 1, 2, 4];
const BLOCK_RAW: u32 = 0;
const BLOCK_RLE: u32 = 1;
const BLOCK_RESERVED: u32 = 3;
const CHECKSUM_SIZE: usize = 4;

/// Why the walk stopped before the end of the stream: zstd.py's three errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// "zstd: Truncated source"
    Truncated = 1,
    /// "zstd: Decompression error: Unknown frame descriptor"
    UnknownFrame = 2,
    /// "... Data corruption detected (reserved block type)"
    ReservedBlock = 3,
}

/// One frame to decode: `_ZstdFrame` of zstd.py (never a skippable or an empty one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZstdFrame {
    pub start: usize,
    /// The end of each block (the last one includes the checksum): where the decoder is fed to.
    pub pieces: Vec<usize>,
    pub content_size: Option<u64>,
    /// Window_Size, or a single segment's content size (zstd.py decides which context decodes it).
    pub window: Option<u64>,
}

/// What a frame header says (`_zstd_frame_header_end`).
struct FrameHeader {
    first_block: usize,
    content_size: Option<u64>,
    checksum: bool,
    window: Option<u64>,
    /// The reserved bit clear, no dictionary id, and a window no larger than [`EMPTY_WINDOW_MAX`].
    plain: bool,
}

fn need(buf: &[u8], pos: usize, size: usize) -> Result<(), FrameError> {
    if buf.len().saturating_sub(pos) < size {
        Err(FrameError::Truncated)
    } else {
        Ok(())
    }
}

fn le(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

fn le32(buf: &[u8], pos: usize) -> Result<u32, FrameError> {
    need(buf, pos, 4)?;
    Ok(le(&buf[pos..pos + 4]) as u32)
}

/// `_window_size`: Window_Size from a Window_Descriptor byte (exponent bits 7-3, mantissa 2-0).
fn window_size(descriptor: u8) -> u64 {
    let window_base = 1u64 << (10 + u32::from(descriptor >> 3));
    window_base + (window_base >> 3) * u64::from(descriptor & 0x07)
}

fn frame_header(buf: &[u8], mut pos: usize) -> Result<FrameHeader, FrameError> {
    need(buf, pos, 1)?;
    let fhd = buf[pos];
    pos += 1;
    let fcs_flag = usize::from(fhd >> 6);
    let single_segment = fhd & 0x20 != 0;
    let fcs_size = if fcs_flag == 0 && single_segment { 1 } else { FCS_SIZES[fcs_flag] };
    let window_bytes = usize::from(!single_segment);
    let dict_size = DICT_ID_SIZES[usize::from(fhd & 0x03)];
    need(buf, pos, window_bytes + dict_size + fcs_size)?;
    let mut window = if single_segment { None } else { Some(window_size(buf[pos])) };
    pos += window_bytes + dict_size;
    let content_size = (fcs_size > 0).then(|| le(&buf[pos..pos + fcs_size]) + if fcs_size == 2 { 256 } else { 0 });
    if window.is_none() {
        window = content_size;
    }
    Ok(FrameHeader {
        first_block: pos + fcs_size,
        content_size,
        checksum: fhd & 0x04 != 0,
        window,
        plain: fhd & 0x08 == 0 && dict_size == 0 && window.is_some_and(|w| w <= EMPTY_WINDOW_MAX),
    })
}

/// `_zstd_could_start_frame`: whether 1-3 trailing bytes begin a frame magic (truncated) rather
/// than garbage (an unknown frame descriptor), as libzstd tells them apart.
fn could_start_frame(tail: &[u8]) -> bool {
    let frame = MAGIC.to_le_bytes();
    let skippable = SKIPPABLE_MAGIC.to_le_bytes();
    frame.starts_with(tail)
        || (!tail.is_empty() && tail[0] & 0xF0 == skippable[0] && skippable[1..].starts_with(&tail[1..]))
}

/// Where the frame at `start` ends, and the frame itself when it must be decoded (`None`: a
/// skippable or an empty frame).
fn walk_frame(buf: &[u8], start: usize) -> Result<(usize, Option<ZstdFrame>), FrameError> {
    let tail = buf.get(start..).unwrap_or(&[]);
    if tail.len() < 4 && !could_start_frame(tail) {
        return Err(FrameError::UnknownFrame);
    }
    let magic = le32(buf, start)?;
    let mut pos = start + 4;
    if magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC {
        let size = le32(buf, pos)? as usize;
        pos += 4;
        need(buf, pos, size)?;
        return Ok((pos + size, None));
    }
    if magic != MAGIC {
        return Err(FrameError::UnknownFrame);
    }
    let header = frame_header(buf, pos)?;
    pos = header.first_block;
    let mut pieces = Vec::new();
    let mut empty_blocks = true;
    loop {
        need(buf, pos, 3)?;
        let block = le(&buf[pos..pos + 3]) as u32;
        pos += 3;
        let (last, block_type, block_size) = (block & 1 != 0, (block >> 1) & 0x03, (block >> 3) as usize);
        if block_type == BLOCK_RESERVED {
            return Err(FrameError::ReservedBlock);
        }
        let payload = if block_type == BLOCK_RLE { 1 } else { block_size };
        need(buf, pos, payload)?;
        pos += payload;
        empty_blocks &= block_type == BLOCK_RAW && block_size == 0 && last && pieces.is_empty();
        if last {
            if header.checksum {
                need(buf, pos, CHECKSUM_SIZE)?;
                pos += CHECKSUM_SIZE;
            }
            pieces.push(pos);
            let empty =
                empty_blocks && header.plain && !header.checksum && header.content_size.unwrap_or(0) == 0;
            let frame = (!empty).then_some(ZstdFrame {
                start,
                pieces,
                content_size: header.content_size,
                window: header.window,
            });
            return Ok((pos, frame));
        }
        pieces.push(pos);
    }
}

/// Walk every frame of `buf`: the frames to decode, in order, and the error that stopped the walk
/// (the frames before it are still to be decoded first: a decoding error comes before it).
pub fn frames(buf: &[u8]) -> (Vec<ZstdFrame>, Option<FrameError>) {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        match walk_frame(buf, pos) {
            Ok((next, frame)) => {
                out.extend(frame);
                pos = next;
            }
            Err(err) => return (out, Some(err)),
        }
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_INPUT: [u8; 9] = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x00, 0x01, 0x00, 0x00];

    #[test]
    fn skippable_and_empty_frames_are_dropped() {
        let mut buf = Vec::new();
        for i in 0..1000u32 {
            buf.extend((SKIPPABLE_MAGIC | (i & 0xF)).to_le_bytes());
            buf.extend(0u32.to_le_bytes());
            buf.extend(EMPTY_INPUT);
        }
        assert_eq!(frames(&buf), (vec![], None));
    }

    #[test]
    fn a_frame_with_data_comes_back_block_by_block() {
        // no content size, window 2 MiB (0x58), a raw block of 3 bytes, then an empty last block
        let mut buf = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x58, 0x18, 0x00, 0x00, b'a', b'b', b'c', 0x01, 0x00, 0x00];
        let (got, err) = frames(&buf);
        assert_eq!(err, None);
        assert_eq!(got, vec![ZstdFrame { start: 0, pieces: vec![12, 15], content_size: None, window: Some(2 << 20) }]);
        buf.pop();
        assert_eq!(frames(&buf).1, Some(FrameError::Truncated));
    }

    #[test]
    fn what_is_not_empty_is_decoded() {
        let mut with_checksum = EMPTY_INPUT.to_vec();
        with_checksum[4] |= 0x04;
        with_checksum.extend([0x99, 0xE9, 0xD8, 0x51]);
        let mut with_size = EMPTY_INPUT.to_vec();
        with_size[5] = 1;
        let mut reserved = EMPTY_INPUT.to_vec();
        reserved[4] |= 0x08;
        for buf in [with_checksum, with_size, reserved] {
            assert_eq!(frames(&buf).0.len(), 1, "{buf:02x?}");
        }
    }

    #[test]
    fn garbage_and_cut_magics() {
        assert_eq!(frames(&[0x00]).1, Some(FrameError::UnknownFrame));
        assert_eq!(frames(&[0x28, 0xB5]).1, Some(FrameError::Truncated));
        assert_eq!(frames(&[0x5A, 0x2A]).1, Some(FrameError::Truncated));
        assert_eq!(frames(&[0x5A, 0x2B]).1, Some(FrameError::UnknownFrame));
        assert_eq!(frames(&[1, 2, 3, 4, 5]).1, Some(FrameError::UnknownFrame));
        assert_eq!(frames(&[0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x00, 0x07, 0x00, 0x00]).1, Some(FrameError::ReservedBlock));
    }
}
