"""``paranmt-hf measures``: the per-pair measure registry, and the models two of its measures need.

``list`` prints the columns of :data:`paranmt_hf.corpus.measures.registry.MEASURES` (what ``corpus annotate`` can add
and ``corpus filter --filter thresholds --bound COLUMN=LOW:HIGH`` can threshold). ``train-lm`` trains the KenLM
language model of ``lm_perplexity``; ``train-classifier`` the reference-vs-translation classifier of
``reference_probability`` (EMNLP 2017 §5.6).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..corpus.text.tokenizer_names import TOKENIZERS

EPILOG = """examples (EMNLP 2017 §5.6: a 3-gram KenLM on 40,000 held-out references; a classifier on held-out
references vs their back-translations):
  paranmt-hf measures list
  paranmt-hf measures train-lm heldout-backtranslations.tsv --column 1 --order 3 --output lm/
  paranmt-hf measures train-classifier heldout-backtranslations.tsv --output classifier/
  paranmt-hf corpus filter pairs.tsv -o kept.tsv --filter thresholds --language-model lm/ \\
      --bound lm_perplexity=:100 --classifier classifier/ --bound reference_probability=0.5:"""


def add_parser(subparsers: Any) -> None:
    """Register ``measures``."""
    parser = subparsers.add_parser("measures", help="the per-pair measures; train their language model / classifier",
                                   description=__doc__, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="measures_command", metavar="TOOL", required=True)
    p = sub.add_parser("list", help="the measure columns, their definitions and sources")
    p.set_defaults(func=_list)

    p = sub.add_parser("train-lm", help="KenLM n-gram language model of English sentences (lm_perplexity)")
    p.add_argument("inputs", nargs="+", help="text or TSV(.gz) files")
    p.add_argument("--column", type=int, default=1, help="1-based TSV column holding the English (default 1)")
    p.add_argument("--output", required=True, help="model folder to write")
    p.add_argument("--order", type=int, default=3, help="n-gram order (E17: 3)")
    p.add_argument("--tokenizer", default="nltk", choices=list(TOKENIZERS),
                   help="tokenizer of the training text, as for overlaps (default: nltk)")
    p.add_argument("--cased", action="store_true", help="keep case (default: lower-case)")
    p.add_argument("--binary", action="store_true", help="also convert to KenLM's binary format")
    p.add_argument("--lmplz", default=None, help="KenLM's lmplz program (default: $KENLM_BIN or PATH)")
    p.add_argument("--memory", default="1G", help="lmplz -S")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    p.set_defaults(func=_train_lm)

    p = sub.add_parser("train-classifier", help="reference-vs-translation classifier (reference_probability)")
    p.add_argument("inputs", nargs="+", help="TSV(.gz): reference TAB back-translation [TAB ...] (n-best: one row "
                   "per candidate)")
    p.add_argument("--output", required=True, help="classifier folder to write")
    p.add_argument("--validation", type=float, default=0.1, help="held-out references for tuning C (share or count)")
    p.add_argument("--test", type=float, default=0.1, help="held-out references for the report (share or count)")
    p.add_argument("--seed", type=int, default=1, help="seed of the splits and the negatives (default 1)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    p.set_defaults(func=_train_classifier)


def _list(args: argparse.Namespace) -> int:
    from ..corpus.measures.registry import MEASURES

    for spec in MEASURES.values():
        needs = f" [needs {', '.join(spec.needs)}]" if spec.needs else ""
        given = f" [given by {spec.given_by}]" if spec.given_by else ""
        print(f"{spec.name}: {spec.description} ({spec.source}){needs}{given}")
    return 0


def _train_lm(args: argparse.Namespace) -> int:
    from ..corpus.measures.columns import read_columns
    from ..corpus.measures.language_model import LanguageModelError, train_language_model
    from ..utils.atomic import OutputExistsError

    try:
        (texts,) = read_columns(args.inputs, (args.column,))
        path = train_language_model(texts, args.output, args.order, args.tokenizer, not args.cased, args.lmplz,
                                    args.memory, args.binary, args.overwrite)
    except (LanguageModelError, ValueError, OutputExistsError, FileNotFoundError) as err:
        raise SystemExit(f"paranmt-hf measures train-lm: {err}") from err
    print(f"trained a {args.order}-gram model on {len(texts):,} sentences -> {path}", file=sys.stderr)
    return 0


def _train_classifier(args: argparse.Namespace) -> int:
    import json

    from ..corpus.measures.columns import read_columns
    from ..corpus.measures.reference_classifier import train_reference_classifier
    from ..utils.atomic import OutputExistsError, check_output

    try:
        check_output(args.output, args.inputs, args.overwrite)
        references, translations = read_columns(args.inputs, (1, 2))
        classifier = train_reference_classifier(references, translations, args.validation, args.test, seed=args.seed)
        classifier.save(args.output, overwrite=args.overwrite)
    except (ValueError, OutputExistsError, FileNotFoundError) as err:
        raise SystemExit(f"paranmt-hf measures train-classifier: {err}") from err
    print(json.dumps({k: classifier.report[k] for k in ("references", "split", "C", "test")}, indent=2))
    return 0

