"""Entry point of the ``paranmt-hf`` command.

Each sub-command lives in its own module of this package and exposes ``add_parser(subparsers)``, which registers an
``argparse`` sub-parser whose ``func`` default runs the command. Modules are imported only when the command line is
parsed, so ``paranmt-hf --help`` stays fast. A user's mistake ends in one line on stderr, the same way for every
command (:mod:`paranmt_hf.cli.errors`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from ..utils.no_space import is_no_space, no_space_error
from .errors import CommandFailed, cli_wording, interruption, message_of, user_error
from .progress import progress_as_asked

# Sub-command modules, in help order.
COMMAND_MODULES = (
    "build_tokenizer",
    "build",
    "convert",
    "corpus",
    "measures",
    "tune_filters",
    "data",
    "train",
    "train_generator",
    "train_translator",
    "paraphrase",
    "eval",
    "embed",
    "score",
    "export",
    "publish",
)


class _Parser(argparse.ArgumentParser):
    """``argparse`` with a "did you mean" for a mistyped flag (``--trian`` -> ``--train``), on every Python."""

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # noqa: D102
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = _subparser(self, parsed)
            command.error(unrecognized(command, extras))
        return parsed


def unrecognized(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """Argparse's "unrecognized arguments" message, with the closest flag of ``parser`` for each mistyped one."""
    import difflib

    flags = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
    hints = []
    for extra in extras:
        flag = extra.split("=", 1)[0]
        if flag.startswith("--"):
            close = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"{flag}: did you mean {close[0]}?")
    return f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(hints)})" if hints else "")


def _subparser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost sub-command parser that ``args`` went through (``paranmt-hf corpus filter`` -> its parser)."""
    for dest in ("command", *SUBCOMMAND_DEST.values()):
        name = getattr(args, dest, None)
        choices = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if isinstance(name, str) and choices and name in choices:
            parser = choices[name]
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available sub-command."""
    parser = _Parser(
        prog="paranmt-hf",
        description="Paraphrastic sentence embeddings (ParaNMT-50M and successors) for the Hugging Face ecosystem.",
    )
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="log at INFO level, and show the traceback of an error instead of its one line")
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
        with _sigterm_unwinds(), progress_as_asked(args):
            result = args.func(args)
        sys.stdout.flush()
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status of an interrupted command (as the corpus tools)
        return _stopped(args, signal.SIGINT)
    except SystemExit as err:
        if err.code != 128 + signal.SIGTERM:
            raise
        return _stopped(args, signal.SIGTERM)
    except BrokenPipeError:  # `paranmt-hf score ... | head`: the reader left; stop quietly, as `cat` does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush then has nowhere to fail
        return 128 + getattr(signal, "SIGPIPE", 13)  # the status of a process killed by SIGPIPE
    except Exception as err:
        stop = interruption(err)
        if stop is not None:  # raised while unwinding Ctrl-C or `kill` (e.g. by a worker process): the stop
            return _stopped(args, stop)
        err = _one_sentence(err, args)
        status = user_error(err, getattr(args, "user_errors", ()))
        if status is None or args.verbose:
            raise
        command = _subparser(parser, args)
        flags = [o for action in command._actions for o in action.option_strings]
        message = cli_wording(message_of(err), flags, getattr(args, "keyword_flags", None))
        line = f"paranmt-hf {_command_name(args)}: {message}"
        print(line, file=sys.stderr)  # noqa: T201 - the command's error, one line
        raise CommandFailed(line, status) from err
    return int(result or 0)


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the command runs, SIGTERM (`kill`, a job scheduler) unwinds it as Ctrl-C does.

    The caller's handler comes back after (``main([...])`` called from Python). Signal handlers can be set in the main
    thread only.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _unwind)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _unwind(signum: int, frame: Any) -> None:
    """SIGTERM's handler: unwind the command as Ctrl-C does (temporary outputs removed, checkpoints kept)."""
    sys.exit(128 + signum)


def _stopped(args: argparse.Namespace, signum: int) -> int:
    """Report a command stopped by Ctrl-C (SIGINT) or ``kill`` (SIGTERM) in one line; the shell's status for it."""
    how = "interrupted" if signum == signal.SIGINT else "terminated"
    print(f"paranmt-hf {_command_name(args)}: {how}; {_not_written(args)}: "  # noqa: T201 - one line
          f"{RERUN.get(args.command, 'run the same command again')}", file=sys.stderr)
    return 128 + signum


RERUN = {"train": "run the same command again with --resume (it continues from the last checkpoint)"}
"""How to go on after a full device, where it is not just running the same command again."""


def _not_written(args: argparse.Namespace) -> str:
    output = getattr(args, "output", None)
    return f"{output} was not written" if output else "the output was not written"


def _one_sentence(err: Exception, args: argparse.Namespace) -> Exception:
    """The user's error a library's exception stands for (missing extra, pickled weights, full disk), or ``err``."""
    from ..model.pickled_weights import pickled_code_error
    from ..utils.imports import extra_hint

    if isinstance(err, ModuleNotFoundError):  # a core install without the extra the command needs
        return extra_hint(err) or err
    if is_no_space(err):
        return no_space_error(getattr(args, "output", None), *([RERUN[args.command]] if args.command in RERUN else []))
    return pickled_code_error(err) or err  # a model loader other than ours (a translation model, ...)


SUBCOMMAND_DEST = {"data": "data_command", "corpus": "corpus_command", "convert": "source",
                   "measures": "measures_command"}
"""Where a command with sub-commands keeps the sub-command's name (for the error line)."""


def _command_name(args: argparse.Namespace) -> str:
    sub = getattr(args, SUBCOMMAND_DEST.get(args.command, ""), None)
    return f"{args.command} {sub}" if isinstance(sub, str) else str(args.command)


if __name__ == "__main__":
    sys.exit(main())
