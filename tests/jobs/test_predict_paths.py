"""verify and txn ask the loading model one way (kseg.recovery.verdict.paths.predict_paths).

A log directory and partition directories named alongside it: the log directory is predicted whole;
a partition inside it is that log directory's (predicted once, listed once); a partition of another
log directory is predicted alone with its parent's marker and checkpoints.  The verdict (exit code and
headline) is the same from verify and txn, and the same as triage's for the log directory alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from logdirs import LogDir, batch

from kseg.cli import cli
from kseg.recovery.verdict.paths import predict_paths

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "kafka-logs"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> tuple[Path, Path]:
    """(a copy of the real log directory, a second log directory whose t-0 has a torn last batch)."""
    root = tmp_path_factory.mktemp("paths")
    real = root / "kafka-logs"
    shutil.copytree(REAL, real)
    other = LogDir(root / "other")
    part = other.partition("t", 0, {0: [batch(0, 3), batch(3, 2)]})
    log = part.file(".log")
    log.write_bytes(log.read_bytes()[:-5])
    return real, other.finish(clean=False)


def test_a_partition_inside_a_given_log_directory_is_predicted_once(dirs):
    real, other = dirs
    predicted = predict_paths([real], [(real / "foo-0", "foo", 0, ""), (other / "t-0", "t", 0, "")])
    assert list(predicted.log_dirs) == [str(real)]
    assert list(predicted.alone) == [str(other / "t-0")]  # foo-0 is the log directory's
    assert [Path(p.path).name for p in predicted.partitions()] == [
        "__consumer_offsets-12", "foo-0", "nikhilDemo-0", "some-topic-0", "t-0"]
    assert predicted.alone[str(other / "t-0")].outcome == "truncated"  # loaded with other/'s inputs: unclean
    verdict = predicted.verdict()
    assert verdict.scope >= {str(real), str(real / "foo-0"), str(other / "t-0")}


def test_txn_lists_a_partition_of_a_given_log_directory_once(dirs):
    real, _ = dirs
    runner = CliRunner()
    both = runner.invoke(cli, ["txn", "--now", "newest", str(real), str(real / "foo-0")])
    alone = runner.invoke(cli, ["txn", "--now", "newest", str(real)])
    assert both.output.splitlines()[0] == "kseg txn: 4 partitions, 0 with problems; 0 transactions; 0 stuck groups"
    assert (both.exit_code, both.output) == (alone.exit_code, alone.output)


def test_verify_txn_and_triage_give_one_verdict(dirs):
    real, other = dirs
    runner = CliRunner()
    lines = {}
    for command in (["verify"], ["txn", "--now", "newest"]):
        result = runner.invoke(cli, [*command, str(real), str(other / "t-0")])
        lines[command[0]] = (result.exit_code, [line for line in result.output.splitlines()
                                                if line.startswith("verdict:")])
    assert lines["verify"] == lines["txn"]
    # the real partitions have no partition.metadata (renamed -stray); t-0's torn batch was below its high watermark
    assert lines["txn"] == (1, ["verdict: error: the broker starts; not served (renamed -stray) (4 partitions); "
                                "committed offsets lost"])
    triage = runner.invoke(cli, ["triage", str(real)])
    verify = runner.invoke(cli, ["verify", str(real)])
    verdicts = [[line for line in r.output.splitlines() if line.startswith("verdict:")] for r in (triage, verify)]
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) == 1


def test_predictions_pickle_by_their_fields(dirs):
    """--jobs workers send predictions back pickled as (class, fields): equal after the round trip."""
    import pickle

    real, other = dirs
    broken = other.parent / "broken"
    shutil.copytree(other, broken)
    (broken / "recovery-point-offset-checkpoint").write_text("0\n2\nt 0 1\n")  # too few entries: an IOException
    predicted = predict_paths([real, broken])
    log_dirs = list(predicted.log_dirs.values())
    assert any(c.reports_offline for d in log_dirs for c in d.checkpoints.values())  # a CheckpointRead that fails
    for prediction in predicted.partitions():
        copy = pickle.loads(pickle.dumps(prediction))
        assert copy == prediction and type(copy) is type(prediction)
        assert pickle.dumps(prediction).count(b"changes_content") == 0  # no field names on the wire
    for log_dir in log_dirs:
        for read in log_dir.checkpoints.values():
            assert pickle.loads(pickle.dumps(read)) == read
