//! verify's cross-check of a segment's `.index` and `.timeindex` against the batches of its `.log`
//! (`kseg/ops/verify/index_checks.py`, `OffsetIndexCheck` and `TimeIndexCheck`: the reference).
//!
//! Each check reads its index's written slots once, is shown every valid batch of the one log walk
//! in file order (`observe`, or a run of them at once), and at the end says which entries are wrong
//! and how: a *verdict* per entry with a finding, never a finding for a healthy entry. The Python
//! side turns verdicts into findings with the same text, so a healthy index costs no Python per
//! entry or per batch. State is bounded by the index's size, never by the log's.

/// Verdict codes; the numbers each carries are listed at the variant. Shared with index_checks.py.
pub mod code {
    /// order: the entry's offset is below the segment's base offset.
    pub const BELOW_BASE: u8 = 1;
    /// order: offset (.index) or timestamp (.timeindex) not above the previous entry's (a = previous).
    pub const KEY_ORDER: u8 = 2;
    /// order: position not above the previous entry's (.index), offset below the previous entry's
    /// (.timeindex) (a = previous).
    pub const VALUE_ORDER: u8 = 3;
    /// .index: the position is past the end of the log or negative (a = log size).
    pub const PAST_END: u8 = 10;
    /// .index: no valid batch starts at the position.
    pub const NOT_A_BATCH: u8 = 11;
    /// both: the offset is beyond the log's last offset (a = the log's last offset).
    pub const BEYOND_LAST: u8 = 12;
    /// .index: the offset is not above the last offset of the batch before (a = that offset).
    pub const NOT_ABOVE_PREVIOUS: u8 = 13;
    /// .index: the offset is inside its batch (a = batch base, b = batch last).
    pub const INSIDE_BATCH: u8 = 14;
    /// .index: the offset is the last of no batch at or after the position.
    pub const NOT_LAST_OF_ANY: u8 = 15;
    /// .timeindex: the offset is in no valid batch.
    pub const IN_NO_BATCH: u8 = 16;
    /// .timeindex: the timestamp is not the batch's max (a = position, b = the batch's max).
    pub const NOT_BATCH_MAX: u8 = 17;
    /// .timeindex: the timestamp is below an earlier batch's max (a = that max).
    pub const BELOW_EARLIER: u8 = 18;
}

/// One entry with a finding: (entry number, code, a, b).
pub type Verdict = (usize, u8, i128, i128);

/// An offset of an entry: the base offset plus a relative offset may pass `i64::MAX` (a name's base
/// near it), as Python's integers do.
pub type Offset = i128;

fn be_i32(b: &[u8]) -> i64 {
    i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn be_i64(b: &[u8]) -> i64 {
    i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Entry numbers sorted by a key, for lookups of every entry with a given key.
struct ByKey(Vec<(i128, usize)>);

impl ByKey {
    fn new(keys: impl Iterator<Item = i128>) -> ByKey {
        let mut v: Vec<(i128, usize)> = keys.enumerate().map(|(i, k)| (k, i)).collect();
        v.sort_unstable();
        ByKey(v)
    }

    /// The entries with this key, in entry order (as the Python dict's lists hold them).
    fn get(&self, key: i128) -> &[(i128, usize)] {
        let from = self.0.partition_point(|&(k, _)| k < key);
        let to = from + self.0[from..].partition_point(|&(k, _)| k == key);
        &self.0[from..to]
    }
}

fn max_opt(a: Option<i128>, b: i128) -> Option<i128> {
    Some(a.map_or(b, |a| a.max(b)))
}

/// `OffsetIndexCheck`'s cross-check: entries (offset, position).
pub struct OffsetCheck {
    base: i128,
    entries: Vec<(Offset, i64)>,
    by_position: ByKey,
    by_last: ByKey,
    /// entry -> (batch base, batch last, previous batch's last) of the batch at its position.
    at: Vec<Option<(Offset, Offset, Option<Offset>)>>,
    /// entry -> position of the first batch whose last offset is the entry's.
    last_match: Vec<Option<i64>>,
    previous_last: Option<Offset>,
    log_last: Option<Offset>,
}

impl OffsetCheck {
    /// The first `live` slots of an `.index` file (8 bytes each: relative offset, position).
    pub fn new(data: &[u8], live: usize, base: i64) -> OffsetCheck {
        let base = i128::from(base);
        let entries: Vec<(Offset, i64)> =
            data.chunks_exact(8).take(live).map(|e| (base + i128::from(be_i32(&e[..4])), be_i32(&e[4..]))).collect();
        let n = entries.len();
        OffsetCheck {
            base,
            by_position: ByKey::new(entries.iter().map(|e| i128::from(e.1))),
            by_last: ByKey::new(entries.iter().map(|e| e.0)),
            entries,
            at: vec![None; n],
            last_match: vec![None; n],
            previous_last: None,
            log_last: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, i: usize) -> (Offset, i64) {
        self.entries[i]
    }

    /// `_order`: below the base, offsets and positions that do not go up.
    pub fn order(&self) -> Vec<Verdict> {
        let mut out = Vec::new();
        for (i, &(offset, pos)) in self.entries.iter().enumerate() {
            if offset < self.base {
                out.push((i, code::BELOW_BASE, 0, 0));
            }
            if i == 0 {
                continue;
            }
            let (prev_offset, prev_pos) = self.entries[i - 1];
            if offset <= prev_offset {
                out.push((i, code::KEY_ORDER, prev_offset, 0));
            }
            if pos <= prev_pos {
                out.push((i, code::VALUE_ORDER, prev_pos.into(), 0));
            }
        }
        out
    }

    /// `observe`: one valid batch of the log, in file order.
    pub fn observe(&mut self, pos: i64, base: Offset, last: Offset) {
        for &(_, i) in self.by_position.get(pos.into()) {
            self.at[i] = Some((base, last, self.previous_last));
        }
        for &(_, i) in self.by_last.get(last) {
            self.last_match[i].get_or_insert(pos);
        }
        self.previous_last = Some(last);
        self.log_last = max_opt(self.log_last, last);
    }

    /// `finish`: each entry against what the walk saw.
    pub fn finish(&self, log_size: i64) -> Vec<Verdict> {
        let mut out = Vec::new();
        for (i, &(offset, pos)) in self.entries.iter().enumerate() {
            if pos >= log_size || pos < 0 {
                out.push((i, code::PAST_END, log_size.into(), 0));
                continue;
            }
            let Some((batch_base, batch_last, previous_last)) = self.at[i] else {
                out.push((i, code::NOT_A_BATCH, 0, 0));
                continue;
            };
            if let Some(log_last) = self.log_last.filter(|&l| offset > l) {
                out.push((i, code::BEYOND_LAST, log_last, 0));
            } else if let Some(previous) = previous_last.filter(|&p| offset <= p) {
                out.push((i, code::NOT_ABOVE_PREVIOUS, previous, 0));
            } else if offset == batch_last || self.last_match[i].unwrap_or(-1) > pos {
                continue;
            } else if offset < batch_last {
                out.push((i, code::INSIDE_BATCH, batch_base, batch_last));
            } else {
                out.push((i, code::NOT_LAST_OF_ANY, 0, 0));
            }
        }
        out
    }
}

/// `TimeIndexCheck`'s cross-check: entries (timestamp, offset).
pub struct TimeCheck {
    base: i128,
    entries: Vec<(i64, Offset)>,
    /// entry numbers in offset order (stable: equal offsets in entry order).
    sorted: Vec<usize>,
    next: usize,
    /// entry -> (position, batch last, batch max timestamp, running max before the batch).
    matched: Vec<Option<(i64, Offset, i64, i64)>>,
    running_max: i64,
    running_max_offset: Option<Offset>,
    log_last: Option<Offset>,
}

impl TimeCheck {
    /// The first `live` slots of a `.timeindex` file (12 bytes each: timestamp, relative offset).
    pub fn new(data: &[u8], live: usize, base: i64) -> TimeCheck {
        let base = i128::from(base);
        let entries: Vec<(i64, Offset)> =
            data.chunks_exact(12).take(live).map(|e| (be_i64(&e[..8]), base + i128::from(be_i32(&e[8..])))).collect();
        let mut sorted: Vec<usize> = (0..entries.len()).collect();
        sorted.sort_by_key(|&i| entries[i].1); // stable, as Python's sorted
        TimeCheck {
            base,
            matched: vec![None; entries.len()],
            entries,
            sorted,
            next: 0,
            running_max: -1,
            running_max_offset: None,
            log_last: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, i: usize) -> (i64, Offset) {
        self.entries[i]
    }

    /// `_order`: below the base, timestamps that do not go up, offsets that go back.
    pub fn order(&self) -> Vec<Verdict> {
        let mut out = Vec::new();
        for (i, &(ts, offset)) in self.entries.iter().enumerate() {
            if offset < self.base {
                out.push((i, code::BELOW_BASE, 0, 0));
            }
            if i == 0 {
                continue;
            }
            let (prev_ts, prev_offset) = self.entries[i - 1];
            if ts <= prev_ts {
                out.push((i, code::KEY_ORDER, prev_ts.into(), 0));
            }
            if offset < prev_offset {
                out.push((i, code::VALUE_ORDER, prev_offset, 0));
            }
        }
        out
    }

    /// `observe`: one valid batch of the log, in file order.
    pub fn observe(&mut self, pos: i64, base: Offset, last: Offset, max_timestamp: i64) {
        let n = self.sorted.len();
        let mut j = self.next;
        while j < n && self.entries[self.sorted[j]].1 < base {
            j += 1; // offset between batches: left unmatched
        }
        while j < n && self.entries[self.sorted[j]].1 <= last {
            self.matched[self.sorted[j]] = Some((pos, last, max_timestamp, self.running_max));
            j += 1;
        }
        self.next = j;
        if max_timestamp > self.running_max {
            self.running_max = max_timestamp;
            self.running_max_offset = Some(last);
        }
        self.log_last = max_opt(self.log_last, last);
    }

    /// `finish`: each entry against the batches, and the log's largest timestamp when no entry
    /// has it (timestamp, offset).
    pub fn finish(&self) -> (Vec<Verdict>, Option<(i64, Option<Offset>)>) {
        let mut out = Vec::new();
        for (i, &(ts, offset)) in self.entries.iter().enumerate() {
            if let Some(log_last) = self.log_last.filter(|&l| offset > l) {
                out.push((i, code::BEYOND_LAST, log_last, 0));
                continue;
            }
            let Some((pos, _last, batch_max, max_before)) = self.matched[i] else {
                out.push((i, code::IN_NO_BATCH, 0, 0));
                continue;
            };
            if ts != batch_max {
                out.push((i, code::NOT_BATCH_MAX, pos.into(), batch_max.into()));
            } else if ts < max_before {
                out.push((i, code::BELOW_EARLIER, max_before.into(), 0));
            }
        }
        let largest = self.entries.iter().map(|e| e.0).max().unwrap_or(-1);
        let unindexed =
            (self.running_max >= 0 && self.running_max > largest).then_some((self.running_max, self.running_max_offset));
        (out, unindexed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_index(entries: &[(i32, i32)]) -> Vec<u8> {
        entries.iter().flat_map(|(o, p)| o.to_be_bytes().into_iter().chain(p.to_be_bytes())).collect()
    }

    #[test]
    fn a_healthy_index_has_no_verdict() {
        let data = offset_index(&[(2, 100), (5, 200)]);
        let mut check = OffsetCheck::new(&data, 2, 10);
        for (pos, base, last) in [(0, 10, 11), (100, 12, 12), (150, 13, 14), (200, 15, 15)] {
            check.observe(pos, base, last);
        }
        assert_eq!((check.order(), check.finish(300)), (vec![], vec![]));
    }

    #[test]
    fn stale_and_misplaced_entries() {
        let data = offset_index(&[(2, 100), (1, 50), (9, 400)]);
        let mut check = OffsetCheck::new(&data, 3, 10);
        check.observe(0, 10, 11);
        check.observe(100, 12, 13);
        assert_eq!(check.order(), vec![(1, code::KEY_ORDER, 12, 0), (1, code::VALUE_ORDER, 100, 0)]);
        assert_eq!(
            check.finish(300),
            vec![(0, code::INSIDE_BATCH, 12, 13), (1, code::NOT_A_BATCH, 0, 0), (2, code::PAST_END, 300, 0)]
        );
    }
}
