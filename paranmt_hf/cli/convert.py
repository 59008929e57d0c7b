"""``paranmt-hf convert``: turn an original released checkpoint into a Hugging Face model directory.

Examples::

    paranmt-hf convert pras model.para.lc.100.pt --sp-model paranmt.model --output paranmt-sp-1024
    paranmt-hf convert paranmt50m ngram-word-concat-40.pickle --combination concat --output paranmt-trigram-word
"""

from __future__ import annotations

import argparse
import json
import os


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``convert {pras,paranmt50m}``."""
    parser = subparsers.add_parser(
        "convert",
        help="convert an original checkpoint (PRAS .pt + sentencepiece, or a ParaNMT-50M pickle)",
        description="Convert an original checkpoint into a model directory (loaded without running pickled code).",
    )
    kinds = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)

    pras = kinds.add_parser("pras", help="Paraphrastic Representations at Scale: .pt checkpoint + sentencepiece model")
    pras.add_argument("checkpoint", help="the .pt file, e.g. model.para.lc.100.pt")
    pras.add_argument("--sp-model", required=True, help="its sentencepiece model, e.g. paranmt.model")
    pras.add_argument("--ignore-moses", action="store_true",
                      help="convert a --tokenize 1 checkpoint anyway (no Moses tokenisation in the converted model)")
    _common(pras)
    pras.set_defaults(func=run_pras)

    p50 = kinds.add_parser("paranmt50m", help="ParaNMT-50M pickle (word, trigram, or trigram+word averaging model)")
    p50.add_argument("pickle", help="the .pickle file, e.g. ngram-word-concat-40.pickle")
    p50.add_argument("--combination", choices=("concat", "add"), default="concat",
                     help="-combination_method of a trigram+word model (not stored in the pickle; default concat)")
    p50.add_argument("--token-type", choices=("word", "trigram"), default=None,
                     help="vocabulary type of a single model (default: guessed from the vocabulary)")
    _common(p50)
    p50.set_defaults(func=run_paranmt50m)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", required=True, help="model directory to write")
    parser.add_argument("--no-sentence-transformers", action="store_true",
                        help="do not write the sentence-transformers module files")


def _save(encoder: object, report: object, args: argparse.Namespace) -> int:
    encoder.save_pretrained(args.output, sentence_transformers=not args.no_sentence_transformers)
    path = os.path.join(args.output, "conversion_report.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report.to_dict(), f, ensure_ascii=False, indent=2)
    print(f"wrote {args.output} ({encoder!r}); report: {path}")
    for note in report.notes:
        print(f"note: {note}")
    return 0


def run_pras(args: argparse.Namespace) -> int:
    """Convert a PRAS checkpoint."""
    from ..convert.pras import convert_pras

    encoder, report = convert_pras(args.checkpoint, args.sp_model, ignore_moses=args.ignore_moses)
    return _save(encoder, report, args)


def run_paranmt50m(args: argparse.Namespace) -> int:
    """Convert a ParaNMT-50M pickle."""
    from ..convert.paranmt50m import convert_paranmt50m

    encoder, report = convert_paranmt50m(args.pickle, combination=args.combination, token_type=args.token_type)
    return _save(encoder, report, args)
