//! The clean run of `LogSegment.recover`'s loop, as `kseg/recovery/indexes.py` (`_recover`,
//! `_Indexes.index_point`) runs it: the `.index` and `.timeindex` entries of a run of whole,
//! CRC-valid magic-2 batches without a producer id.
//!
//! Kafka 4.3.0: storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java
//! (`recover`: an index entry each time more than `index.interval.bytes` have passed since the
//! last one, at the batch's last offset and position, with the largest timestamp so far),
//! OffsetIndex.java (`append`), TimeIndex.java (`maybeAppend`). The Python loop is the reference
//! and handles everything else: the run stops *before* any batch that would take another path
//! there (a legacy or damaged entry, a producer id, an offset outside the segment, an index
//! append that throws, a position past `Int.MaxValue`), leaving the state as it was before that
//! batch, so the Python loop goes on from the returned position as if it had walked the run itself.

use crate::walk::{CleanV2Run, V2Header};

/// `MAX_RELATIVE_OFFSET` in layout.py: an index holds offsets as int32 relative to the base.
pub const MAX_RELATIVE_OFFSET: i64 = 0x7FFF_FFFF;

/// What the loop carries from batch to batch: `_recover`'s locals and `_Indexes`' fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexState {
    pub base_offset: i64,
    /// `index.interval.bytes`.
    pub interval: i64,
    pub valid_bytes: i64,
    pub batches: i64,
    pub max_timestamp: i64,
    pub offset_of_max: i64,
    pub next_index_point: i64,
    /// `_Indexes.last_offset`, `offset_count`, `max_offset_entries`.
    pub last_offset: i64,
    pub offset_count: i64,
    pub max_offset_entries: i64,
    /// `_Indexes.last_time_timestamp`, `last_time_offset`, `time_count`, `max_time_entries`.
    pub last_time_timestamp: i64,
    pub last_time_offset: i64,
    pub time_count: i64,
    pub max_time_entries: i64,
    /// The partition leader epoch of the last batch taken ([`NONE`]: no batch yet).
    pub last_epoch: i64,
    /// `updateMapEndOffset`: the last offset + 1 of the last batch taken ([`NONE`]: no batch yet).
    pub map_end: i64,
}

/// "Not set yet" in [`IndexState::last_epoch`] and [`IndexState::map_end`] (`None` in Python).
pub const NONE: i64 = i64::MIN;

/// What a run adds: `.index` and `.timeindex` entries (file bytes), and the `(epoch, base offset)`
/// of each batch whose epoch differs from the batch before it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexOut {
    pub offsets: Vec<u8>,
    pub times: Vec<u8>,
    pub epochs: Vec<(i64, i64)>,
}

impl IndexOut {
    fn lens(&self) -> (usize, usize, usize) {
        (self.offsets.len(), self.times.len(), self.epochs.len())
    }

    fn truncate(&mut self, (offsets, times, epochs): (usize, usize, usize)) {
        self.offsets.truncate(offsets);
        self.times.truncate(times);
        self.epochs.truncate(epochs);
    }
}

impl IndexState {
    /// The fields in the order of the Python tuple.
    pub fn to_array(&self) -> [i64; 16] {
        [
            self.base_offset,
            self.interval,
            self.valid_bytes,
            self.batches,
            self.max_timestamp,
            self.offset_of_max,
            self.next_index_point,
            self.last_offset,
            self.offset_count,
            self.max_offset_entries,
            self.last_time_timestamp,
            self.last_time_offset,
            self.time_count,
            self.max_time_entries,
            self.last_epoch,
            self.map_end,
        ]
    }

    pub fn from_array(a: [i64; 16]) -> IndexState {
        IndexState {
            base_offset: a[0],
            interval: a[1],
            valid_bytes: a[2],
            batches: a[3],
            max_timestamp: a[4],
            offset_of_max: a[5],
            next_index_point: a[6],
            last_offset: a[7],
            offset_count: a[8],
            max_offset_entries: a[9],
            last_time_timestamp: a[10],
            last_time_offset: a[11],
            time_count: a[12],
            max_time_entries: a[13],
            last_epoch: a[14],
            map_end: a[15],
        }
    }
}

/// One batch's effect on the state, or `None` if the Python loop must take this batch.
fn step(s: &IndexState, h: &V2Header, next: usize, out: &mut IndexOut) -> Option<IndexState> {
    if h.producer_id >= 0 {
        return None; // updateProducerState: the Python loop's
    }
    let last_offset = h.base_offset.checked_add(i64::from(h.last_offset_delta))?;
    let mut n = advance(s, last_offset, h.max_timestamp, next, out)?;
    n.map_end = last_offset.checked_add(1)?;
    let epoch = i64::from(h.partition_leader_epoch);
    if epoch != n.last_epoch {
        out.epochs.push((epoch, h.base_offset));
        n.last_epoch = epoch;
    }
    Some(n)
}

/// What every batch does to the state, whatever its magic: the offset range check, the running
/// max timestamp, an index point, the valid bytes and the count; `None` where Python must take it.
fn advance(s: &IndexState, last_offset: i64, max_timestamp: i64, next: usize, out: &mut IndexOut) -> Option<IndexState> {
    let highest = s.base_offset.saturating_add(MAX_RELATIVE_OFFSET);
    if last_offset < s.base_offset || last_offset > highest {
        return None; // ensureOffsetInRange throws
    }
    let mut n = *s;
    if max_timestamp > n.max_timestamp {
        n.max_timestamp = max_timestamp;
        n.offset_of_max = last_offset;
    }
    if n.valid_bytes > n.next_index_point {
        index_point(&mut n, last_offset, &mut out.offsets, &mut out.times)?;
        n.next_index_point = n.valid_bytes.checked_add(n.interval)?;
    }
    n.valid_bytes = i64::try_from(next).ok()?;
    n.batches += 1;
    Some(n)
}

/// The loop over the valid V0/V1 messages from `position` that start before `until` (taken
/// shallowly, as `_recover` takes them: the wrapper's offset is the last offset, its timestamp
/// the max; no epoch, no producer state, no map end); returns the position reached. Stops before
/// anything else -- a V2 batch, damage, an offset outside the segment, an index append that
/// throws -- with the state as it was, for the V2 run or the Python loop to go on from there.
pub fn legacy_index_run(
    buf: &[u8],
    position: usize,
    limit: usize,
    until: usize,
    state: &mut IndexState,
    out: &mut IndexOut,
) -> usize {
    let mut pos = position;
    while pos < until {
        let Some((offset, timestamp, next)) = crate::legacy::valid_message(buf, pos, limit) else {
            break;
        };
        if !take_with(state, out, |s, out| advance(s, offset, timestamp, next, out)) {
            break;
        }
        pos = next;
    }
    pos
}

/// `OffsetIndex.append` then `TimeIndex.maybeAppend`; `None` where either would throw (the state
/// is then dropped: the caller's copy is untouched). The entries are appended only on success.
fn index_point(n: &mut IndexState, last_offset: i64, offsets: &mut Vec<u8>, times: &mut Vec<u8>) -> Option<()> {
    if n.offset_count >= n.max_offset_entries || (n.offset_count > 0 && last_offset <= n.last_offset) {
        return None; // full index, or an offset no larger than the last
    }
    let position = i32::try_from(n.valid_bytes).ok()?; // struct "i": Python would fail to pack
    let relative = i32::try_from(last_offset - n.base_offset).ok()?;
    let mut time_entry = None;
    if n.time_count >= n.max_time_entries - 1 || (n.time_count > 0 && n.offset_of_max < n.last_time_offset) {
        return None; // full time index (one slot spare), or an offset going back
    }
    if n.max_timestamp > n.last_time_timestamp {
        time_entry = Some((n.max_timestamp, i32::try_from(n.offset_of_max - n.base_offset).ok()?));
    }
    offsets.extend_from_slice(&relative.to_be_bytes());
    offsets.extend_from_slice(&position.to_be_bytes());
    n.offset_count += 1;
    n.last_offset = last_offset;
    if let Some((timestamp, relative_of_max)) = time_entry {
        times.extend_from_slice(&timestamp.to_be_bytes());
        times.extend_from_slice(&relative_of_max.to_be_bytes());
        n.time_count += 1;
        n.last_time_timestamp = timestamp;
        n.last_time_offset = n.offset_of_max;
    }
    Some(())
}

/// Run the loop over the clean batches from `position` that start before `until` (and end by
/// `limit`); returns the position reached. `state` and `out` are updated for every batch taken.
/// A position below `until` and below the last whole header is that of an entry the Python loop
/// must take (or of a tail too short for a V2 header: the walk's end).
pub fn index_run(
    buf: &[u8],
    position: usize,
    limit: usize,
    until: usize,
    state: &mut IndexState,
    out: &mut IndexOut,
) -> usize {
    index_run_at(buf, 0, position, limit, until, state, out)
}

/// [`index_run`] over a window of the file read into memory: `base` is the file position of
/// `buf[0]`, so the state stays in file positions; the positions taken and returned are `buf`'s.
/// A batch running past the window's end ends the run there.
pub fn index_run_at(
    buf: &[u8],
    base: usize,
    position: usize,
    limit: usize,
    until: usize,
    state: &mut IndexState,
    out: &mut IndexOut,
) -> usize {
    let mut run = CleanV2Run::new(buf, position, limit, until);
    for (pos, next, h) in &mut run {
        if !take(state, &h, base.saturating_add(next), out) {
            return pos;
        }
    }
    run.position()
}

/// One batch through [`step`]: the state and `out` updated, or both left as they were (false).
fn take(state: &mut IndexState, h: &V2Header, next: usize, out: &mut IndexOut) -> bool {
    take_with(state, out, |s, out| step(s, h, next, out))
}

/// One entry (a V2 batch or a V0/V1 message) through `apply`, shared by the V2 and the legacy run:
/// the new state kept and `true`, or -- where `apply` says the Python loop must take this entry --
/// the entries it appended dropped and `state` left as it was (`false`), so the run stops before it.
fn take_with(
    state: &mut IndexState,
    out: &mut IndexOut,
    apply: impl FnOnce(&IndexState, &mut IndexOut) -> Option<IndexState>,
) -> bool {
    let before = out.lens();
    match apply(state, out) {
        Some(n) => {
            *state = n;
            true
        }
        None => {
            out.truncate(before); // stop before this entry, with the state as it was
            false
        }
    }
}

/// `valid_v2_run` and [`index_run`] over the same batches in one pass: every clean batch from
/// `position` before `until` goes to `headers` (exactly as `valid_v2_run`), and the batches up to
/// the first the Python loop must take go through the loop (exactly as `index_run`). Returns the
/// run's end and, if the loop stopped inside the run, the position of the batch it stopped before.
///
/// `buf` may be a window of the file read into memory: `base` is the file position of `buf[0]`,
/// so the loop's state (valid bytes, index positions) stays in file positions; the positions
/// taken and returned are `buf`'s. A batch running past the window's end ends the run there.
#[allow(clippy::too_many_arguments)]
pub fn indexed_v2_run(
    buf: &[u8],
    base: usize,
    position: usize,
    limit: usize,
    until: usize,
    state: &mut IndexState,
    out: &mut IndexOut,
    headers: &mut Vec<V2Header>,
) -> (usize, Option<usize>) {
    let mut run = CleanV2Run::new(buf, position, limit, until);
    let mut stopped = None;
    for (pos, next, h) in &mut run {
        headers.push(h);
        if stopped.is_none() && !take(state, &h, base.saturating_add(next), out) {
            stopped = Some(pos);
        }
    }
    (run.position(), stopped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LOG_OVERHEAD;
    use crate::walk::crc32c;

    fn batch(base: i64, delta: i32, max_ts: i64, producer_id: i64, length: i32) -> Vec<u8> {
        let mut b = vec![0u8; LOG_OVERHEAD + length as usize];
        b[0..8].copy_from_slice(&base.to_be_bytes());
        b[8..12].copy_from_slice(&length.to_be_bytes());
        b[16] = 2;
        b[23..27].copy_from_slice(&delta.to_be_bytes());
        b[35..43].copy_from_slice(&max_ts.to_be_bytes());
        b[43..51].copy_from_slice(&producer_id.to_be_bytes());
        let crc = crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    }

    fn fresh(base: i64, interval: i64) -> IndexState {
        IndexState::from_array([base, interval, 0, 0, -1, -1, interval, -1, 0, 1000, -1, base, 0, 1000, NONE, NONE])
    }

    #[test]
    fn entries_each_time_the_interval_is_passed() {
        let mut log = Vec::new();
        for i in 0..10 {
            log.extend(batch(i * 3, 2, 100 + i, -1, 100));
        }
        let mut s = fresh(0, 200);
        let mut out = IndexOut::default();
        let end = index_run(&log, 0, log.len(), usize::MAX, &mut s, &mut out);
        assert_eq!(end, log.len());
        assert_eq!(s.batches, 10);
        // batch 0 at 0, 1 at 112, 2 at 224 (> 200: entry), 3 at 336, 4 at 448 (> 424: entry) ...
        assert_eq!(&out.offsets[..8], &[0, 0, 0, 8, 0, 0, 0, 224]);
        assert_eq!(s.offset_count as usize * 8, out.offsets.len());
        assert_eq!(s.time_count as usize * 12, out.times.len());
        // every batch has epoch 0: one change, at the first batch; the map end after the last
        assert_eq!(out.epochs, vec![(0, 0)]);
        assert_eq!(s.map_end, 27 + 2 + 1);
    }

    #[test]
    fn stops_before_a_producer_batch_with_the_state_unchanged() {
        let mut log = batch(0, 0, 5, -1, 100);
        log.extend(batch(1, 0, 6, 7, 100));
        let mut s = fresh(0, 1);
        let mut out = IndexOut::default();
        let end = index_run(&log, 0, log.len(), usize::MAX, &mut s, &mut out);
        assert_eq!(end, 112);
        assert_eq!(s.batches, 1);
        assert!(out.offsets.is_empty() && out.times.is_empty());
        assert_eq!((out.epochs, s.map_end), (vec![(0, 0)], 1));
        // the combined run takes both headers and stops indexing before the producer batch
        let (mut s2, mut out2, mut headers) = (fresh(0, 1), IndexOut::default(), Vec::new());
        assert_eq!(indexed_v2_run(&log, 0, 0, log.len(), usize::MAX, &mut s2, &mut out2, &mut headers), (224, Some(112)));
        assert_eq!((headers.len(), s2, out2.epochs), (2, s, vec![(0, 0)]));
    }

    #[test]
    fn stops_before_an_offset_outside_the_segment() {
        let log = batch(5, 0, 5, -1, 100);
        let mut s = fresh(10, 1);
        let mut out = IndexOut::default();
        assert_eq!(index_run(&log, 0, log.len(), usize::MAX, &mut s, &mut out), 0);
        assert_eq!((s, out), (fresh(10, 1), IndexOut::default()));
    }
}
