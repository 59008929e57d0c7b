"""The one way every ``paranmt-hf`` command reports a user's mistake: one line on stderr, no traceback.

A command raises; :func:`paranmt_hf.cli.main.main` turns the exceptions listed here into ``paranmt-hf COMMAND:
message`` and exit status 2 (:class:`UsageError`: the command line asks for something that does not exist) or 1
(everything else: a missing file or extra, an output that exists, a run that cannot resume, ...). Any other exception
is a bug and keeps its traceback; ``--verbose`` shows the traceback of every error.
"""

from __future__ import annotations

import difflib
import signal
import sys
from collections.abc import Iterable

from ..utils.exception_chain import exception_chain

USAGE_STATUS = 2
"""Exit status of a command line that asks for something that does not exist (as argparse's own errors)."""

FAILURE_STATUS = 1
"""Exit status of a command that could not do what was asked."""


class UsageError(ValueError):
    """The command line names something that does not exist (a recipe, a task, ...) or combines options wrongly."""


USAGE_ERRORS: tuple[str, ...] = (
    "paranmt_hf.cli.errors.UsageError",
    "paranmt_hf.data.errors.UnknownTaskError",
    "paranmt_hf.training.recipes.RecipeError",
    "paranmt_hf.training.data.SourceSpecError",
)
"""Exceptions that say the command line names something that does not exist (exit status 2), by
``module.ClassName``."""

USER_ERRORS: tuple[str, ...] = (
    "builtins.FileNotFoundError",
    "builtins.FileExistsError",
    "builtins.NotADirectoryError",
    "builtins.IsADirectoryError",
    "builtins.PermissionError",
    "paranmt_hf.utils.no_space.NoSpaceError",
    "paranmt_hf.utils.imports.MissingExtraError",
    "paranmt_hf.utils.atomic.OutputExistsError",
    "paranmt_hf.utils.atomic.OutputIsInputError",
    "paranmt_hf.utils.atomic.UnsafeNameError",
    "paranmt_hf.utils.safe_pickle.UnsafePickleError",
    "paranmt_hf.model.convert.errors.ConversionError",
    "paranmt_hf.model.remote_code.RemoteCodeError",
    "paranmt_hf.model.folder_kind.NotAParaNMTFolderError",
    "paranmt_hf.model.export.ExportCheckError",
    "paranmt_hf.modeling.modeling_paranmt.WeightsMismatchError",
    "paranmt_hf.utils.integrity.DamagedFileError",
    "paranmt_hf.data.reader.InputError",
    "paranmt_hf.model.tokenization.errors.VocabularyError",
    "paranmt_hf.model.tokenization.errors.TokenizerSourceError",
    "paranmt_hf.data.records.BadLineError",
    "paranmt_hf.corpus.errors.CorpusError",
    "paranmt_hf.corpus.measures.language_model.LanguageModelError",
    "paranmt_hf.paraphrase_generator.train.GeneratorError",
    "paranmt_hf.fetch.http.DownloadError",
    "paranmt_hf.fetch.lock.UnpinnedError",
    "paranmt_hf.fetch.archives.ArchiveError",
    "paranmt_hf.evaluation.download.DataUnavailableError",
    "paranmt_hf.evaluation.streaming.InputLineError",
    "paranmt_hf.training.checkpoints.ResumeError",
    "paranmt_hf.training.hf_trainer.RunDivergedError",
    "paranmt_hf.hub.publish.PublishError",
    "paranmt_hf.hub.eval_results.EvalResultsError",
)
"""Exceptions that report a user's mistake or a missing resource (exit status 1), by ``module.ClassName``. A class
counts only once its module is imported (an exception of a module never imported cannot have been raised), so
checking costs no import."""


class CommandFailed(SystemExit):
    """What :func:`~paranmt_hf.cli.main.main` raises after printing the one line.

    ``str()`` is the line, ``code`` the exit status.
    """

    def __init__(self, line: str, status: int) -> None:
        super().__init__(line)
        self.code = status


def _loaded(names: Iterable[str]) -> list[type[BaseException]]:
    classes = []
    for dotted in names:
        module_name, _, class_name = dotted.rpartition(".")
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            classes.append(cls)
    return classes


def message_of(err: BaseException) -> str:
    """The error's own sentence, on one line.

    A ``KeyError``'s message without its quotes; the lines of a message that lists things (``what:``, then
    ``- a`` and ``- b`` on lines of their own, then ``what to do``) joined as ``what: a; b; what to do``; a line
    after a full stop follows it as the next sentence.
    """
    from ..utils.no_space import NoSpaceError

    if isinstance(err, NoSpaceError):
        return str(err.strerror)
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    lines = [line.strip().removeprefix("- ").strip() for line in text.strip().splitlines() if line.strip()]
    folded = ""
    for line in lines:
        folded += line if not folded else (" " if folded.endswith((":", ".")) else "; ") + line
    return folded or type(err).__name__


def interruption(err: BaseException) -> int | None:
    """The signal a run was stopped by, when ``err`` was raised while unwinding that stop; ``None`` otherwise.

    Ctrl-C (``KeyboardInterrupt``: SIGINT) or ``kill`` (``SystemExit(128 + SIGTERM)``, the commands' SIGTERM handler)
    anywhere in ``err``'s chain of contexts. Unwinding can raise again: a pool of worker processes, stopped at the
    same time by the same signal sent to the whole process group (a terminal, ``timeout``, a cluster's job
    scheduler), fails to reach its manager process while it terminates. That error is the stop, not a failure.
    """
    for cause in exception_chain(err):
        if isinstance(cause, KeyboardInterrupt):
            return int(signal.SIGINT)
        if isinstance(cause, SystemExit) and cause.code == 128 + signal.SIGTERM:
            return int(signal.SIGTERM)
    return None


def user_error(err: BaseException, extra: Iterable[type[BaseException]] = ()) -> int | None:
    """The exit status for a user's mistake; ``None`` for anything else (a bug: keep the traceback).

    A :data:`USAGE_ERRORS` class gives 2, a :data:`USER_ERRORS` or ``extra`` class 1.
    """
    if isinstance(err, tuple(_loaded(USAGE_ERRORS))):
        return USAGE_STATUS
    if isinstance(err, tuple(_loaded(USER_ERRORS)) + tuple(extra)):
        return FAILURE_STATUS
    return None


def cli_wording(message: str, flags: Iterable[str], aliases: dict[str, str] | None = None) -> str:
    """A library message in the command line's words: its keywords as the command's flags.

    ``overwrite=True`` -> ``--overwrite``, ``max_steps=6`` -> ``--max-steps 6``, ``max_steps`` -> ``--max-steps``
    (identifiers with an underscore only, not a field such as ``recipe.max_steps``), and ``--overwrite
    (overwrite=True)`` -> ``--overwrite``, for each keyword whose flag (``_`` -> ``-``, or ``aliases``: keyword ->
    flag) the command has; other text is left as it is.
    """
    aliases = aliases or {}
    keywords = {keyword: flag for keyword, flag in aliases.items() if flag in set(flags)}
    keywords.update({flag[2:].replace("-", "_"): flag for flag in flags
                     if flag.startswith("--") and flag[2:].replace("-", "_") not in keywords})
    for keyword, flag in sorted(keywords.items(), key=lambda item: -len(item[0])):  # longest first
        for said in (f" ({keyword}=True in Python)", f" ({keyword}=True)"):
            message = message.replace(flag + said, flag)
        message = _replace_word(message, f"{keyword}=True", flag)
        message = _replace_word(message, f"{keyword}=", f"{flag} ")
        if "_" in keyword:
            message = _replace_word(message, keyword, flag, not_before=(" (",))
    return message


def _replace_word(text: str, old: str, new: str, not_before: tuple[str, ...] = ()) -> str:
    """``text`` with each ``old`` that starts a word (not after a letter, digit, ``_``, ``-`` or ``.``) replaced.

    A bare keyword (``old`` ending in a letter) must also end its word, and not be followed by one of
    ``not_before``.
    """
    out, start = [], 0
    while (found := text.find(old, start)) >= 0:
        end = found + len(old)
        before = text[found - 1] if found else " "
        after = text[end] if end < len(text) else " "
        word_ends = not old[-1].isalnum() or not (after.isalnum() or after == "_")
        if (before.isalnum() or before in "_-.") or not word_ends or text.startswith(not_before, end):
            out.append(text[start:end])
        else:
            out.append(text[start:found] + new)
        start = end
    return "".join(out) + text[start:]


def close_names(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean X?"`` for the closest of ``choices`` to a mistyped ``name`` (empty when none is close)."""
    close = difflib.get_close_matches(name, list(choices), n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""
