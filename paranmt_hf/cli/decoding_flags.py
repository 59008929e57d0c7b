"""The decoding flags of the commands that generate (``corpus backtranslate`` / ``make``, ``paraphrase``).

One definition per flag; a command passes the help of the flags it explains in its own terms (the papers' settings).
:func:`decoding_options` hands the parsed flags to the API's
:class:`~paranmt_hf.corpus.translation.transformers_engine.DecodingOptions`, which checks them.
"""

from __future__ import annotations

import argparse
from typing import Any

SAMPLING_HELP = {
    "top_k": "sampling: keep the k most probable tokens",
    "top_p": "sampling: nucleus probability mass, e.g. 0.9",
    "temperature": "sampling: temperature",
}


def add_decoding_flags(group: Any, *, num_beams: str, num_return: str, do_sample: str, max_new_tokens: str,
                       seed: str) -> None:
    """Add ``--num-beams``, ``--num-return``, ``--do-sample``, the sampling flags, ``--max-new-tokens`` and ``--seed``.

    The keywords are the help of the flags whose meaning the command explains.
    """
    group.add_argument("--num-beams", type=int, default=None, help=num_beams)
    group.add_argument("--num-return", type=int, default=1, help=num_return)
    group.add_argument("--do-sample", action="store_true", help=do_sample)
    for name, text in SAMPLING_HELP.items():
        group.add_argument("--" + name.replace("_", "-"), type=float if name != "top_k" else int, default=None,
                           help=text)
    group.add_argument("--max-new-tokens", type=int, default=None, help=max_new_tokens)
    group.add_argument("--seed", type=int, default=0, help=seed)


def decoding_options(args: argparse.Namespace) -> Any:
    """The :class:`~paranmt_hf.corpus.translation.transformers_engine.DecodingOptions` of the flags the command has."""
    from dataclasses import fields

    from ..corpus.translation.transformers_engine import DecodingOptions

    given = vars(args)
    return DecodingOptions(**{f.name: given[f.name] for f in fields(DecodingOptions)
                              if f.name in given and f.name != "batch_size"})
