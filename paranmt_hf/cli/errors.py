"""The one way every ``paranmt-hf`` command reports a user's mistake: one line on stderr, no traceback.

A command raises; :func:`paranmt_hf.cli.main.main` turns the exceptions listed here into ``paranmt-hf COMMAND:
message`` and exit status 2 (:class:`UsageError`: the command line asks for something that does not exist) or 1
(everything else: a missing file or extra, an output that exists, a run that cannot resume, ...). Any other exception
is a bug and keeps its traceback; ``--verbose`` shows the traceback of every error.
"""

from __future__ import annotations

import difflib
import errno
import re
import sys
from collections.abc import Iterable

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
)
"""Exceptions that say the command line names something that does not exist (exit status 2), by
``module.ClassName``."""

USER_ERRORS: tuple[str, ...] = (
    "builtins.FileNotFoundError",
    "builtins.FileExistsError",
    "builtins.NotADirectoryError",
    "builtins.IsADirectoryError",
    "builtins.PermissionError",
    "paranmt_hf.cli.errors.NoSpaceError",
    "paranmt_hf.utils.imports.MissingExtraError",
    "paranmt_hf.utils.atomic.OutputExistsError",
    "paranmt_hf.utils.atomic.OutputIsInputError",
    "paranmt_hf.utils.atomic.UnsafeNameError",
    "paranmt_hf.utils.safe_pickle.UnsafePickleError",
    "paranmt_hf.model.remote_code.RemoteCodeError",
    "paranmt_hf.model.folder_kind.NotAParaNMTFolderError",
    "paranmt_hf.model.export.ExportCheckError",
    "paranmt_hf.modeling.modeling_paranmt.WeightsMismatchError",
    "paranmt_hf.utils.integrity.DamagedFileError",
    "paranmt_hf.data.reader.InputError",
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
    "paranmt_hf.hub.publish.PublishError",
    "paranmt_hf.hub.eval_results.EvalResultsError",
)
"""Exceptions that report a user's mistake or a missing resource (exit status 1), by ``module.ClassName``. A class
counts only once its module is imported (an exception of a module never imported cannot have been raised), so
checking costs no import."""


NO_SPACE_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
"""``errno`` values of a full device or an exhausted quota."""


class NoSpaceError(OSError):
    """The device filled up while a command wrote its output (nothing half-written is left in its place)."""


def is_no_space(err: BaseException) -> bool:
    """Whether ``err``, or an error it was raised from, is a full device.

    An ``OSError`` with ``ENOSPC``/``EDQUOT``, or safetensors' ``SafetensorError`` wrapping os error 28 (it writes
    from Rust, so the ``OSError`` never reaches Python).
    """
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in NO_SPACE_ERRNOS:
            return True
        if type(current).__name__ == "SafetensorError" and (
                "code: 28" in str(current) or "StorageFull" in str(current) or "No space left" in str(current)):
            return True
        current = current.__cause__ or current.__context__
    return False


def no_space_error(output: object, rerun: str = "run the same command again") -> NoSpaceError:
    """The one sentence of a full device, as the corpus tools say it: what was not written, and what to do."""
    what = f"{output} was not written" if output else "the output was not written"
    return NoSpaceError(errno.ENOSPC, f"no space left on the device; {what}: free some space and {rerun}")


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
    ``- a`` and ``- b`` on lines of their own, then ``what to do``) joined as ``what: a; b; what to do``.
    """
    if isinstance(err, NoSpaceError):
        return str(err.strerror)
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    lines = [line.strip().removeprefix("- ").strip() for line in text.strip().splitlines() if line.strip()]
    folded = ""
    for line in lines:
        folded += line if not folded else (" " if folded.endswith(":") else "; ") + line
    return folded or type(err).__name__


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
    known, aliases = set(flags), aliases or {}

    def flag(keyword: str) -> str | None:
        name = aliases.get(keyword, "--" + keyword.replace("_", "-"))
        return name if name in known else None

    def both(m: re.Match[str]) -> str:
        return m.group(1) if flag(m.group(2)) == m.group(1) else m.group(0)

    message = re.sub(r"(--[\w-]+) \((\w+)=True(?: in Python)?\)", both, message)
    message = re.sub(r"(?<![\w-])(\w+)=True\b", lambda m: flag(m.group(1)) or m.group(0), message)
    message = re.sub(r"(?<![\w-])([a-z]\w*)=([\w.-]+)",
                     lambda m: f"{flag(m.group(1))} {m.group(2)}" if flag(m.group(1)) else m.group(0), message)
    # a bare keyword, not a field (recipe.embedding_dim) nor one that names its flag already (max_grad_norm (--...))
    return re.sub(r"(?<![\w.-])([a-z]+_\w+)\b(?! \()", lambda m: flag(m.group(1)) or m.group(0), message)


def close_names(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean X?"`` for the closest of ``choices`` to a mistyped ``name`` (empty when none is close)."""
    close = difflib.get_close_matches(name, list(choices), n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""
