"""The model a command runs: a folder or a Hub id, behind the ``--trust-remote-code`` gate (off: no folder code).

A Hub id is pinned with ``--model-revision`` or ``ID@REV`` and fetched into the Hub's cache (offline: found there).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_trust_remote_code_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--trust-remote-code`` (off: code shipped in a model directory never runs)."""
    parser.add_argument(
        "--trust-remote-code", action="store_true",
        help="allow code shipped in the model directory to run (custom sentence-transformers modules, auto_map of "
        "an unknown model type); only for models you trust. paranmt_hf models never need it.",
    )


MODEL_HELP = ("model folder or Hub id (org/name, or org/name@REVISION; offline: from the Hub's cache)")


def add_model_argument(parser: argparse.ArgumentParser, help: str = MODEL_HELP) -> None:
    """Add ``model_dir`` (a folder or a Hub id) and ``--model-revision`` (the Hub revision: branch, tag or commit)."""
    parser.add_argument("model_dir", help=help)
    parser.add_argument("--model-revision", default=None, metavar="REV",
                        help="branch, tag or commit of a Hub id (default: main; the same as ID@REV)")


def locate(args: argparse.Namespace) -> None:
    """Make ``args.model_dir`` a local folder: a Hub id is fetched into the Hub's cache (offline: found there).

    ``args.model_name`` keeps the name as given (without its revision), ``args.model_commit`` the Hub commit
    fetched (None for a local folder).

    Raises:
        FileNotFoundError: neither a folder nor a Hub id the Hub (or its cache) has: one sentence.
    """
    from ..model.locate import hub_commit_of, locate_model, split_revision

    given = str(args.model_dir)
    try:
        folder = locate_model(given, getattr(args, "model_revision", None))
    except ValueError as err:
        from .errors import UsageError

        raise UsageError(str(err)) from None
    args.model_name = split_revision(given)[0] if not Path(given).expanduser().is_dir() else given
    args.model_commit = hub_commit_of(folder) if folder != Path(given).expanduser() else None
    args.model_dir = str(folder)


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
