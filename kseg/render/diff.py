"""Text and JSON Lines for ``kseg diff`` results (:mod:`kseg.ops.diff.run`); every function returns lines.

JSON Lines (docs/diff.md): one ``replica`` line per replica, one ``truncation``
line per ordered (leader, follower) pair, one ``divergence`` line per range
where two replicas disagree, one ``group`` line per consumer group a choice
of leader affects, one ``export`` line per replica exported, then the
``recommendation``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from kseg.ops.diff.compare import ONLY_A, ONLY_B, Range
from kseg.ops.diff.run import Choice, DiffResult, PairDiff
from kseg.ops.diff.state import OPEN
from kseg.render.terminal import shown

#: keys shown per pair whose latest values differ
EXAMPLES = 10


def _kind(pair: PairDiff, r: Range) -> str:
    if r.kind == ONLY_A:
        return f"only on {pair.a.path}"
    if r.kind == ONLY_B:
        return f"only on {pair.b.path}"
    return r.kind


def divergence_json(pair: PairDiff, r: Range) -> dict[str, object]:
    return {"type": "divergence", "a": pair.a.path, "b": pair.b.path, "first": r.first, "last": r.last,
            "kind": _kind(pair, r), "batches_a": r.batches_a, "batches_b": r.batches_b}


def _key(key: bytes) -> str:
    return key.decode("utf-8", "backslashreplace")


def _side(entry: tuple[int, int | None] | None) -> str:
    if entry is None:
        return "no entry"
    return f"tombstone at {entry[0]}" if entry[1] is None else f"value at {entry[0]}"


def state_json(pair: PairDiff) -> Iterator[dict[str, object]]:
    """The ``keys`` summary and one ``transaction`` line per transaction whose outcome differs."""
    state = pair.state
    if state is None:
        return
    yield {"type": "keys", "a": pair.a.path, "b": pair.b.path, "keys": state.keys,
           "differing_keys": state.differing,
           "examples": [{"key": _key(k), "a": _side(x), "b": _side(y)} for k, x, y in state.examples]}
    for (producer_id, first), out_a, out_b in state.differing_transactions:
        yield {"type": "transaction", "a": pair.a.path, "b": pair.b.path, "producer_id": producer_id,
               "first_offset": first, "outcome_a": out_a, "outcome_b": out_b}


def state_text(pair: PairDiff, head: str) -> Iterator[str]:
    state = pair.state
    if state is None:
        return
    if state.keys:
        shown_keys = "; ".join(f"{_key(k)!r}: {_side(x)} vs {_side(y)}" for k, x, y in state.examples)
        verdict = "the same" if not state.differing else f"{state.differing} differ ({shown_keys})"
        yield f"{head}: the latest value of each key (of {state.keys}) as read_committed consumers read it: {verdict}"
    for (producer_id, first), out_a, out_b in state.differing_transactions:
        line = f"{head}: transaction of producer {producer_id} from offset {first}: {out_a} vs {out_b}"
        lost = [p.path for p, out in ((pair.a, out_a), (pair.b, out_b)) if out == OPEN]
        yield line + (f"; its marker is missing: kseg txn {' '.join(map(shown, lost))}" if lost else "")


def reason(result: DiffResult) -> str:
    """Why the recommended leader: its cost, then every other choice's."""
    best = result.recommended
    if best is None:
        return "no replica can be loaded"
    others = "; ".join(f"{c.leader.path}: {c.committed_lost} committed, {c.lost} in all"
                       for c in result.choices[1:])
    text = (f"loses {best.committed_lost} offsets acknowledged below a follower's high watermark and "
            f"{best.lost} offsets in all")
    return f"{text}; other choices: {others}" if others else text


def group_json(choice: Choice) -> Iterator[dict[str, object]]:
    for commit, what in choice.groups:
        yield {"type": "group", "leader": choice.leader.path, "group": commit.group,
               "committed_offset": commit.offset, "leader_epoch": commit.leader_epoch,
               "sources": list(commit.sources), "consequence": what}


def render_json(result: DiffResult, exports: list[dict[str, object]] | None = None) -> Iterator[str]:
    for replica in result.replicas:
        yield json.dumps(replica.as_json())
    for t in result.truncations:
        yield json.dumps(t.as_json())
    for pair in result.pairs:
        for r in pair.divergent:
            yield json.dumps(divergence_json(pair, r))
        for line in state_json(pair):
            yield json.dumps(line)
    for choice in result.choices:
        for line in group_json(choice):
            yield json.dumps(line)
    for export in exports or []:
        yield json.dumps(export)
    best = result.recommended
    yield json.dumps({"type": "recommendation", "leader": None if best is None else best.leader.path,
                      "reason": reason(result), "new_leader_epoch": result.new_epoch,
                      "choices": [{"leader": c.leader.path, "committed_lost": c.committed_lost, "lost": c.lost}
                                  for c in result.choices]})


def render_text(result: DiffResult, exports: list[dict[str, object]] | None = None) -> Iterator[str]:
    for r in result.replicas:
        if r.error is not None:
            yield f"{shown(r.path)}: Kafka cannot load it: {r.error}"
            continue
        yield (f"{shown(r.path)}: offsets {r.log_start_offset}..{r.log_end_offset - 1}, high watermark "
               f"{r.high_watermark}, epochs {' '.join(f'{e}@{s}' for e, s in r.epochs) or 'none'}")
        for line in r.epoch_disagreements:
            yield f"  epoch lineage: {line}"
    for pair in result.pairs:
        head = f"{shown(pair.a.path)} vs {shown(pair.b.path)}"
        if not pair.divergent:
            yield f"{head}: identical"
        for span in pair.divergent:
            yield (f"{head}: {span.first}..{span.last} {_kind(pair, span)} "
                   f"({span.batches_a} vs {span.batches_b} batches)")
        yield from state_text(pair, head)
    for t in result.truncations:
        lost = ", ".join(f"{a}..{b}" for a, b in t.lost_offsets) or "nothing"
        cut = (f"starts over at {t.truncation.restarted_at} (truncateFullyAndStartAt)"
               if t.truncation.restarted_at is not None else f"truncates to {t.truncation.truncate_to}")
        yield (f"leader {shown(t.leader.path)}: {shown(t.follower.path)} {cut}, "
               f"loses {lost} ({t.lost_below_high_watermark} below its high watermark {t.follower.high_watermark})")
    for choice in result.choices:
        for commit, what in choice.groups:
            yield (f"leader {shown(choice.leader.path)}: group {commit.group!r} committed at {commit.offset}: {what}")
    for export in exports or []:
        yield f"exported {export['batches']} batches only on {shown(str(export['replica']))} to {shown(str(export['path']))}"
    best = result.recommended
    if best is not None:
        yield f"recommended leader: {shown(best.leader.path)}: {reason(result)}"
