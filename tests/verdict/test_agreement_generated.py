"""One verdict and one exit code from every reading command on log directories damaged by every operator
of ``tests/logdir_gen.py`` (docs/cli.md, "One verdict").

One recipe per damage operator (partition and log-directory operators), each after a clean and after an
unclean shutdown: written as ``tests/interop/load_diff.py`` builds them -- kseg's encoder writes the
``.log`` files, **Kafka's** ``LoadLogDir --work`` (one JVM for all) writes the indexes, snapshots and
epoch caches as a broker does, then the broker's stop and the damage are applied.  Needs Java (skipped
without it, except under CI=true).  The seed is fixed; ``KSEG_VERDICT_SEEDS`` adds more recipes per
operator for a longer run.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from agreement import verdicts

_INTEROP = Path(__file__).resolve().parents[1] / "interop"
if str(_INTEROP) not in sys.path:
    sys.path.insert(0, str(_INTEROP))

import load_diff  # noqa: E402
import logdir_gen as gen  # noqa: E402
from kafka_storage import KafkaStorage, storage_or_skip  # noqa: E402

SEEDS = int(os.environ.get("KSEG_VERDICT_SEEDS", "1"))


def _recipe(op: str, clean: bool, seed: int, logdir_op: bool) -> gen.Recipe:
    rng = random.Random(f"verdict:{op}:{clean}:{seed}")
    recipe = gen.random_recipe(rng, f"{op}-{'clean' if clean else 'unclean'}-{seed}")
    while any("real" in part for part in recipe["partitions"]):  # generated partitions only: no corpus needed
        recipe = gen.random_recipe(rng, recipe["name"])
    recipe["clean"] = clean
    for part in recipe["partitions"]:
        part["ops"] = []
    recipe["ops"] = []
    target = recipe["ops"] if logdir_op else recipe["partitions"][0]["ops"]
    target.append({"op": op, "seed": rng.randrange(1 << 30)})
    return recipe


def _recipes() -> list[gen.Recipe]:
    found = []
    for seed in range(SEEDS):
        for clean in (True, False):
            found += [_recipe(op, clean, seed, False) for op in gen.PARTITION_OPS]
            found += [_recipe(op, clean, seed, True) for op in gen.LOGDIR_OPS]
    return found


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> list[load_diff.Case]:
    storage: KafkaStorage = storage_or_skip()
    root = tmp_path_factory.mktemp("verdict-gen")
    cases = [load_diff.Case(r) for r in _recipes()]
    load_diff.build(load_diff.BatchStorage(storage, root), cases, root, load_diff.Timing())
    return cases


def test_every_damage_operator_is_covered(damaged: list[load_diff.Case]) -> None:
    built = {c.recipe["name"].rsplit("-", 2)[0] for c in damaged if c.path is not None}
    assert built == set(gen.PARTITION_OPS) | set(gen.LOGDIR_OPS)


def test_every_command_gives_the_same_verdict(damaged: list[load_diff.Case]) -> None:
    disagreements, headlines = {}, set()
    for case in damaged:
        if case.path is None:
            continue
        got = verdicts(case.path)
        headlines.update(got.values())
        if len(set(got.values())) != 1 or None in {h for _, h in got.values()}:
            disagreements[case.recipe["name"]] = got
    assert disagreements == {}
    # the damage reaches the verdict: both exit codes, and more than one kind of error
    assert {code for code, _ in headlines} == {0, 1}
    assert len([h for code, h in headlines if code == 1]) >= 3, headlines
