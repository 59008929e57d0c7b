"""A full device, said in one sentence by every command (as the corpus tools say it).

The device filling up while a command writes comes as an ``OSError`` with ``ENOSPC`` or ``EDQUOT``, or, from
safetensors (which writes from Rust), as a ``SafetensorError`` whose text names os error 28. :func:`is_no_space`
recognises both; :class:`NoSpaceError` is the one sentence the command line prints.
"""

from __future__ import annotations

import errno

from .exception_chain import exception_chain

NO_SPACE_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
"""``errno`` values of a full device or an exhausted quota."""


class NoSpaceError(OSError):
    """The device filled up while a command wrote its output (nothing half-written is left in its place)."""


def is_no_space(err: BaseException) -> bool:
    """Whether ``err``, or an error it was raised from, is a full device.

    An ``OSError`` with ``ENOSPC``/``EDQUOT``, or safetensors' ``SafetensorError`` wrapping os error 28 (it writes
    from Rust, so the ``OSError`` never reaches Python).
    """
    for current in exception_chain(err):
        if isinstance(current, OSError) and current.errno in NO_SPACE_ERRNOS:
            return True
        if type(current).__name__ == "SafetensorError" and (
                "code: 28" in str(current) or "StorageFull" in str(current) or "No space left" in str(current)):
            return True
    return False


def no_space_error(output: object, rerun: str = "run the same command again") -> NoSpaceError:
    """The one sentence of a full device, as the corpus tools say it: what was not written, and what to do."""
    what = f"{output} was not written" if output else "the output was not written"
    return NoSpaceError(errno.ENOSPC, f"no space left on the device; {what}: free some space and {rerun}")
