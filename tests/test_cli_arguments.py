"""Numbers out of range are refused when the command line is parsed, before any data is read."""

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
    (["embed", "m", "--input", "x.txt", "--output", "e.npy", "--batch-size", "0"], "--batch-size"),
    (["score", "m", "--input", "x.tsv", "--chunk-size", "-1"], "--chunk-size"),
    *[(["train-generator", "pairs.tsv", "--output", "g", flag, value], flag) for flag, value in (
        ("--max-pairs", "-3"), ("--held-out", "-1"), ("--max-cpu-minutes", "-1"), ("--epochs", "0"),
        ("--max-steps", "0"), ("--batch-size", "0"), ("--learning-rate", "0"), ("--num-beams", "0"))],
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
    args = build_parser().parse_args(["train-generator", "p.tsv", "--output", "g", "--held-out", "0"])
    assert args.held_out == 0 and args.max_steps == -1 and args.max_cpu_minutes is None
