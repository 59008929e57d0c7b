"""Loading the model a command runs, behind the ``--trust-remote-code`` gate (off: no code from the directory)."""

from __future__ import annotations

import argparse
from typing import Any


def add_trust_remote_code_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--trust-remote-code`` (off: code shipped in a model directory never runs)."""
    parser.add_argument(
        "--trust-remote-code", action="store_true",
        help="allow code shipped in the model directory to run (custom sentence-transformers modules, auto_map of "
        "an unknown model type); only for models you trust. paranmt_hf models never need it.",
    )


def load_model(args: argparse.Namespace) -> Any:
    """The encoder of ``args.model_dir`` (:func:`~paranmt_hf.evaluation.encoders.load_encoder`).

    Raises:
        RemoteCodeError: its code would run without ``--trust-remote-code``; WeightsMismatchError /
        DamagedFileError: its files are not a readable model (each reported in one line by :mod:`.errors`).
    """
    from ..evaluation.encoders import load_encoder

    return load_encoder(args.model_dir, trust_remote_code=args.trust_remote_code)


def check_model_code(args: argparse.Namespace) -> None:
    """Refuse a model directory whose code would run without ``--trust-remote-code``.

    Raises:
        RemoteCodeError: naming the files that would run.
    """
    from ..model.remote_code import check_remote_code

    check_remote_code(args.model_dir, args.trust_remote_code)
