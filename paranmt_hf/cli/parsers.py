"""How a command's parser is made: its help, description and epilog laid out alike for every command."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any


def command_parser(subparsers: Any, name: str, help: str, description: str, epilog: str | None = None,
                   fill: bool = False) -> argparse.ArgumentParser:
    """The sub-parser of command ``name`` (``fill``: wrap the description at 100 columns; the epilog as written)."""
    return subparsers.add_parser(name, help=help, description=textwrap.fill(description, 100) if fill else description,
                                 epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_file_io(parser: argparse.ArgumentParser, input_help: str, output_help: str, output_default: str | None = None,
                batch_size: int = 256, chunk_size: str = "lines") -> None:
    """The flags of a command that runs a model over a file chunk by chunk (``embed``, ``score``).

    ``model_dir`` (with ``--model-revision``), ``--input``, ``--output``, ``--batch-size``, ``--chunk-size``,
    ``--overwrite``, ``--no-progress`` and ``--trust-remote-code``.
    """
    from .model_loading import add_model_argument, add_trust_remote_code_flag
    from .progress import add_progress_flag
    from .recipe_flags import POSITIVE, checked_number

    add_model_argument(parser, "model folder (ParaNMT, sentence-transformers or model2vec) or Hub id (org/name, or "
                       "org/name@REVISION; offline: from the Hub's cache)")
    parser.add_argument("--input", required=True, help=input_help)
    parser.add_argument("--output", required=output_default is None, default=output_default, help=output_help)
    parser.add_argument("--batch-size", type=checked_number(int, POSITIVE), default=batch_size,
                        help=f"sentences encoded per batch (default {batch_size})")
    parser.add_argument("--chunk-size", type=checked_number(int, POSITIVE), default=10000,
                        help=f"{chunk_size} read and encoded per chunk")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    add_progress_flag(parser)
    add_trust_remote_code_flag(parser)


def check_hub_ids(args: argparse.Namespace, flags: dict[str, str]) -> None:
    """Refuse, in one sentence naming the flag, a value of ``flags`` (flag -> attribute) that is no Hub id.

    Such names go into model cards and name results folders: quotes, ``..`` and paths are never rewritten.

    Raises:
        UsageError: the first value that is not a Hub repository id.
    """
    from ..hub.publish import PublishError, check_repo_id
    from .errors import UsageError

    for flag, attribute in flags.items():
        value = getattr(args, attribute, None)
        if value is not None:
            try:
                check_repo_id(value, flag)
            except PublishError as err:
                raise UsageError(str(err)) from None


def _columns(text: str) -> str:
    """The argparse type of ``--columns``: ``all`` or column numbers (checked here, read by the library)."""
    from ..data.reader import InputError
    from ..data.sentences import parse_columns

    try:
        parse_columns(text)
    except InputError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def add_corpus_flags(parser: argparse.ArgumentParser) -> None:
    """``--columns`` and ``--limit``: which sentences of the ``--input`` corpus build a vocabulary."""
    from .recipe_flags import POSITIVE, checked_number

    parser.add_argument("--columns", type=_columns, default="all",
                        help="TSV columns to read, counted from 0, e.g. '0,1' (default: all)")
    parser.add_argument("--limit", type=checked_number(int, POSITIVE), default=None,
                        help="read at most this many lines per file")
