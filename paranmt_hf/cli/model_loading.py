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
    """The encoder of ``args.model_dir``; exits with the reason when its code would run without the flag."""
    from ..evaluation.encoders import load_encoder
    from ..model.remote_code import RemoteCodeError
    from ..modeling.modeling_paranmt import WeightsMismatchError
    from ..utils.integrity import DamagedFileError, damaged_file_error

    try:
        return load_encoder(args.model_dir, trust_remote_code=args.trust_remote_code)
    except (RemoteCodeError, FileNotFoundError, WeightsMismatchError, DamagedFileError) as err:
        raise SystemExit(f"paranmt-hf {args.command}: {err}") from err
    except Exception as err:  # sentence-transformers / model2vec folders: name a damaged file if there is one
        damaged = damaged_file_error(args.model_dir, err)
        if damaged is None:
            raise
        raise SystemExit(f"paranmt-hf {args.command}: {damaged}") from err


def check_model_code(args: argparse.Namespace) -> None:
    """Exit with the reason when loading ``args.model_dir`` would run its code without ``--trust-remote-code``."""
    from ..model.remote_code import RemoteCodeError, check_remote_code

    try:
        check_remote_code(args.model_dir, args.trust_remote_code)
    except RemoteCodeError as err:
        raise SystemExit(f"paranmt-hf {args.command}: {err}") from err
