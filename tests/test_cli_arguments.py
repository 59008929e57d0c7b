"""Numbers out of range are refused when the command line is parsed, before any data is read (issue 25 item 10)."""

from __future__ import annotations

import pytest

from paranmt_hf.cli.main import build_parser

TRAIN = ["train", "--train", "pairs.tsv", "--output", "out"]


@pytest.mark.parametrize(("argv", "flag"), [
    ([*TRAIN, "--max-pairs", "-3"], "--max-pairs"),
    ([*TRAIN, "--epochs", "0"], "--epochs"),
    ([*TRAIN, "--max-steps", "0"], "--max-steps"),
    ([*TRAIN, "--margin", "-5"], "--margin"),
    ([*TRAIN, "--batch-size", "0"], "--batch-size"),
    ([*TRAIN, "--save-steps", "0"], "--save-steps"),
    ([*TRAIN, "--scramble-rate", "1.5"], "--scramble-rate"),
    (["eval", "model", "--max-pairs", "-3"], "--max-pairs"),
    (["build", "--kind", "word", "--input", "x.txt", "--output", "m", "--embedding-dim", "0"], "--embedding-dim"),
])
def test_out_of_range_numbers_are_refused_at_parse_time(argv, flag, capsys):
    with pytest.raises(SystemExit) as err:
        build_parser().parse_args(argv)
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert flag in message and "must be" in message


def test_the_defaults_and_no_limit_still_parse():
    args = build_parser().parse_args([*TRAIN, "--max-steps", "-1", "--epochs", "0.5", "--max-pairs", "none"])
    assert args.max_steps == -1 and args.epochs == 0.5
