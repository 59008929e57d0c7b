"""An exception's chain: the error itself, then the ones it was raised from or while handling, as tracebacks show."""

from __future__ import annotations

from collections.abc import Iterator


def exception_chain(err: BaseException) -> Iterator[BaseException]:
    """``err``, then the error it was raised from (``__cause__``) or while handling (``__context__``), and so on.

    Each error once (a chain that loops back ends there). Libraries wrap the error that says what went wrong (a full
    device, a refused pickle, the Hub client's failure, Ctrl-C being unwound): the caller looks for it here.
    """
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


__all__ = ["exception_chain"]
