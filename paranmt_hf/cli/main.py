"""Entry point of the ``paranmt-hf`` command.

Each sub-command lives in its own module of this package and exposes ``add_parser(subparsers)``, which registers an
``argparse`` sub-parser whose ``func`` default runs the command. Modules are imported only when the command line is
parsed, so ``paranmt-hf --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

# Sub-command modules, in help order.
COMMAND_MODULES = (
    "build_tokenizer",
    "build",
    "convert",
    "corpus",
    "data",
    "train",
    "eval",
    "embed",
    "score",
    "export",
    "publish",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available sub-command."""
    parser = argparse.ArgumentParser(
        prog="paranmt-hf",
        description="Paraphrastic sentence embeddings (ParaNMT-50M and successors) for the Hugging Face ecosystem.",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log at INFO level")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"paranmt_hf.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"paranmt_hf.cli.{name}":
                continue  # command not part of this build
            raise
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        result = args.func(args)
    except ModuleNotFoundError as err:  # a core install without the extra the command needs: one sentence
        from ..utils.imports import extra_hint

        hint = extra_hint(err)
        if hint is None:
            raise
        print(f"paranmt-hf {args.command}: {hint}", file=sys.stderr)  # noqa: T201
        return 1
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
