"""The one table of recipe flags shared by ``paranmt-hf train`` and ``paranmt-hf build``.

Each flag sets one :class:`~paranmt_hf.training.recipes.Recipe` field. A flag that is not given leaves the preset's
value; ``none`` turns an optional field off (``--anneal none``, ``--word-vectors none``, ``--vocab-size none``). A
``bool`` field is a switch with a ``--no-`` form (``--lstm-peepholes`` / ``--no-lstm-peepholes``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NamedTuple

from ..modeling.kinds_paranmt import ENCODER_KIND_SPECS, RECURRENT_TOKENS


class Range(NamedTuple):
    """The values a numeric flag accepts: ``check(value)``, described as ``text`` (in the parse error)."""

    check: Callable[[float], bool]
    text: str


INFINITY = float("inf")

POSITIVE = Range(lambda v: v > 0, "> 0")
NON_NEGATIVE = Range(lambda v: v >= 0, ">= 0")
FRACTION = Range(lambda v: 0 <= v <= 1, "between 0 and 1")


class Flag(NamedTuple):
    """One recipe flag: its field, value type, help, allowed values (a closed set), range (checked when parsed)."""

    field: str
    type: Callable[[str], Any]
    help: str
    choices: tuple[str, ...] | None = None
    range: Range | None = None


MODEL_FLAGS: dict[str, Flag] = {
    "kind": Flag("kind", str, "; ".join(f"{k.name}: {k.description}" for k in ENCODER_KIND_SPECS.values())
                 + "; or a combination joined by + (trigram+subword)"),
    "combination": Flag("combination", str, "how several kinds combine", ("concat", "add")),
    "embedding-dim": Flag("embedding_dim", int, "token embedding size (word vectors bring their own width)",
                          range=POSITIVE),
    "rnn-hidden-size": Flag("rnn_hidden_size", int, "LSTM size (none: the embedding size)", range=POSITIVE),
    "bilstm-merge": Flag("bilstm_merge", str, "how a BiLSTM merges its directions", ("mean", "concat", "sum", "max")),
    "lstm-peepholes": Flag("lstm_peepholes", bool, "recurrent encoders use Lasagne's peephole LSTM (ParaNMT-50M's) "
                           "instead of torch.nn.LSTM"),
    "token-type": Flag("token_type", str, "tokens of recurrent encoders", RECURRENT_TOKENS),
    "vocab-size": Flag("vocab_size", int, "vocabulary size per component (none: every token; sp: 50000)",
                       range=POSITIVE),
    "min-count": Flag("min_count", int, "drop rarer word/trigram tokens", range=NON_NEGATIVE),
    "vocab-sentences": Flag("vocab_sentences", int, "build vocabularies from this many training sentences (a sample)",
                            range=POSITIVE),
    "lookup": Flag("lookup", str, "word/trigram lookup of raw text: split (WORD_SPLIT_PATTERN) or paranmt50m (the "
                   "original ParaNMT-50M code: whitespace split, punctuation fallback)", ("split", "paranmt50m")),
    "word-vectors": Flag("word_vectors", str, "initialise word embeddings, e.g. glove-6b-50d (none: random)"),
    "vector-vocab-size": Flag("vector_vocab_size", int, "add this many frequent vector words missing from the data",
                              range=NON_NEGATIVE),
    "pooling": Flag("pooling", str, "pooling over tokens / states", ("mean", "max")),
    "scramble-rate": Flag("scramble_rate", float, "word-scrambling probability (LSTM family)", range=FRACTION),
    "embedding-dropout": Flag("embedding_dropout", float, "dropout on token embeddings", range=FRACTION),
    "teacher": Flag("teacher", str, "sentence-transformers model whose model2vec distillation initialises subword "
                    "tables, e.g. sentence-transformers/all-MiniLM-L6-v2 (peers extra; none: no teacher)"),
    "teacher-pca-dims": Flag("teacher_pca_dims", int, "PCA size of the distilled subword table (none: the teacher's)",
                             range=POSITIVE),
}
"""Flags that shape the model (``train`` and ``build``)."""

TRAINING_FLAGS: dict[str, Flag] = {
    "batch-size": Flag("batch_size", int, "pairs per mini-batch", range=POSITIVE),
    "margin": Flag("margin", float, "loss margin delta", range=POSITIVE),
    "megabatch-size": Flag("megabatch_size", int, "M: mini-batches per mega-batch", range=POSITIVE),
    "anneal": Flag("anneal", int, "grow the mega-batch by one every N mini-batches (none: off)", range=POSITIVE),
    "sampling": Flag("sampling", str, "negative sampling", ("MAX", "MIX", "RAND")),
    "loss": Flag("loss", str, "megabatch (the papers) or mnrl (MultipleNegativesRankingLoss)", ("megabatch", "mnrl")),
    "lr": Flag("learning_rate", float, "Adam learning rate", range=POSITIVE),
    "lr-scheduler": Flag("lr_scheduler", str, "constant (the papers) or linear (decay to 0)"),
    "epochs": Flag("epochs", float, "passes over the data", range=POSITIVE),
    "max-grad-norm": Flag("max_grad_norm", float, "gradient clipping (0 = off; needs --optimizer adam)",
                          range=NON_NEGATIVE),
    "optimizer": Flag("optimizer", str, "lazy_adam: sparse embedding updates", ("auto", "lazy_adam", "adam")),
    "max-pairs": Flag("max_pairs", int, "use at most this many training pairs (none: all)", range=POSITIVE),
    "threads": Flag("num_threads", int, "torch threads (none: 1 for averaging encoders, else torch's default)",
                    range=POSITIVE),
    "teacher-lr": Flag("teacher_learning_rate", float, "learning rate of the distilled subword tables (0: frozen)",
                       range=NON_NEGATIVE),
    "teacher-weight": Flag("teacher_weight", float, "after training, the subword part's norm relative to the rest",
                          range=POSITIVE),
    "tokenlearn": Flag("tokenlearn", bool, "fit the distilled table to the teacher's sentence embeddings of the "
                       "training sentences before combining (cached teacher pass; the best recipe)"),
    "tokenlearn-sentences": Flag("tokenlearn_sentences", int, "at most this many unique training sentences for "
                                 "--tokenlearn (a seeded sample; none: all)", range=POSITIVE),
    "tokenlearn-epochs": Flag("tokenlearn_epochs", float, "epochs of the cosine regression (0: least squares only)",
                              range=NON_NEGATIVE),
    "tokenlearn-lr": Flag("tokenlearn_learning_rate", float, "learning rate of the cosine regression",
                          range=POSITIVE),
    "teacher-precision": Flag("teacher_precision", str, "the teacher's CPU precision for --tokenlearn (float32: "
                              "ONNX Runtime when installed, int8: ONNX Runtime quantised, bfloat16: torch autocast)",
                              ("float32", "int8", "bfloat16")),
}
"""Flags of the training run (``train`` only)."""

OFF = "none"


class _Off:
    """Marks a flag given as ``none`` (turn the field off), as opposed to not given (argparse's ``None``)."""

    def __repr__(self) -> str:
        return OFF


TURNED_OFF = _Off()


def _value(kind: Callable[[str], Any], text: str) -> Any:
    """``kind(text)``, refused as the flag's parse error when it is not a value or not a finite number."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None
    if isinstance(value, float) and not -INFINITY < value < INFINITY:  # inf passes "> 0", nan fails every range
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def _parser_type(flag: str, spec: Flag, optional: bool) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        if text.lower() == OFF:
            if not optional:
                raise argparse.ArgumentTypeError(f"--{flag} cannot be turned off")
            return TURNED_OFF
        if spec.choices and text not in spec.choices:
            raise argparse.ArgumentTypeError(f"invalid choice {text!r} (choose from {', '.join(spec.choices)})")
        value = _value(spec.type, text)
        if spec.range is not None and not spec.range.check(value):
            raise argparse.ArgumentTypeError(f"must be {spec.range.text}, got {text}")
        return value

    parse.__name__ = spec.type.__name__
    return parse


def checked_number(kind: Callable[[str], Any], valid: Range, allowed: tuple[Any, ...] = ()) -> Callable[[str], Any]:
    """An argparse ``type`` for a number in ``valid`` (or one of ``allowed``, e.g. ``-1`` for "no limit")."""

    def parse(text: str) -> Any:
        value = _value(kind, text)
        if value not in allowed and not valid.check(value):
            extra = f" (or {', '.join(map(str, allowed))})" if allowed else ""
            raise argparse.ArgumentTypeError(f"must be {valid.text}{extra}, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def add_recipe_flags(parser: argparse.ArgumentParser, table: dict[str, Flag]) -> None:
    """Add one ``--flag`` per entry of ``table`` (default: not given)."""
    from ..training.recipes import is_optional_field

    for flag, spec in table.items():
        if spec.type is bool:  # a switch: --flag sets True, --no-flag False, neither leaves the preset's value
            parser.add_argument(f"--{flag}", action=argparse.BooleanOptionalAction, default=None, help=spec.help)
            continue
        optional = is_optional_field(spec.field)
        text = spec.help + (f" [{'|'.join(spec.choices)}]" if spec.choices else "")
        parser.add_argument(f"--{flag}", type=_parser_type(flag, spec, optional), default=None, help=text,
                            metavar=flag.replace("-", "_").upper())


def recipe_help() -> str:
    """Help of ``--recipe``: every preset by name (``train --list-recipes`` describes each)."""
    from ..training.recipes import RECIPES

    return f"preset to start from: {', '.join(RECIPES)} (`paranmt-hf train --list-recipes` describes each)"


def recipe_from_args(args: argparse.Namespace, table: dict[str, Flag]) -> Any:
    """The :class:`~paranmt_hf.training.recipes.Recipe` of ``--recipe`` (or the defaults) with the given flags.

    Raises:
        UsageError: an unknown preset (naming the closest ones) or an unknown encoder kind.
    """
    from ..training.recipes import RECIPES, Recipe
    from .errors import UsageError, close_names

    if args.recipe is not None and args.recipe not in RECIPES:
        raise UsageError(f"--recipe: unknown recipe {args.recipe!r}{close_names(args.recipe, RECIPES)} "
                         "(`paranmt-hf train --list-recipes` lists them)")
    recipe = (RECIPES[args.recipe] if args.recipe else Recipe()).replace(**recipe_changes(args, table))
    try:
        recipe.kinds  # noqa: B018 - validates --kind
    except ValueError as err:
        raise UsageError(f"--kind: {err}") from None
    return recipe


def recipe_changes(args: argparse.Namespace, table: dict[str, Flag]) -> dict[str, Any]:
    """The recipe fields set on the command line: given flags only, ``none`` as ``None``."""
    changes = {}
    for flag, spec in table.items():
        value = getattr(args, flag.replace("-", "_"))
        if value is not None:
            changes[spec.field] = None if value is TURNED_OFF else value
    return changes
