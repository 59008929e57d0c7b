"""``paranmt-hf convert``: turn an original released checkpoint into a Hugging Face model directory.

Examples::

    paranmt-hf convert pras model.para.lc.100.pt --sp-model paranmt.model --output paranmt-sp-1024
    paranmt-hf convert paranmt50m ngram-word-concat-40.pickle --combination concat --output paranmt-trigram-word
    paranmt-hf convert paranmt50m bilstmavg-4096-40.pickle --model bilstmavg --output paranmt-bilstm-avg-4096
"""

from __future__ import annotations

import argparse

from ..model.convert import PARANMT50M_COMBINATION_TYPES, PARANMT50M_MODELS
from .progress import add_progress_flag


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``convert {pras,paranmt50m}``."""
    parser = subparsers.add_parser(
        "convert",
        help="convert an original checkpoint (PRAS .pt + sentencepiece, or a ParaNMT-50M pickle)",
        description="Convert an original checkpoint into a model directory (loaded without running pickled code).",
        epilog="examples (the released models):\n" + "\n".join(f"  {line.strip()}" for line in (__doc__ or "").split(
            "Examples::", 1)[-1].strip().splitlines()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)

    pras = kinds.add_parser("pras", help="Paraphrastic Representations at Scale: .pt checkpoint + sentencepiece model")
    pras.add_argument("checkpoint", help="the .pt file, e.g. model.para.lc.100.pt")
    pras.add_argument("--sp-model", required=True, help="its sentencepiece model, e.g. paranmt.model")
    pras.add_argument("--ignore-moses", action="store_true",
                      help="convert a --tokenize 1 checkpoint anyway (no Moses tokenisation in the converted model)")
    _common(pras)
    pras.set_defaults(func=run_pras)

    p50 = kinds.add_parser(
        "paranmt50m",
        help="ParaNMT-50M pickle (word/trigram averaging, (Bi)LSTM avg/max, or a combination)",
        description="Convert a pickle saved by jwieting/para-nmt-50m. The pickle does not record the model type, "
        "the combination method or a BiLSTM's -axis: give them as when training (defaults: the released models).",
    )
    p50.add_argument("pickle", help="the .pickle file, e.g. ngram-word-concat-40.pickle or bilstmavg-4096-40.pickle")
    p50.add_argument("--model", choices=PARANMT50M_MODELS, default=None,
                     help="-model of a single model (default wordaverage; required for LSTM models)")
    p50.add_argument("--axis", type=int, choices=(1, 2), default=2,
                     help="-axis of a BiLSTM model: 2 concatenates the directions (the released 4096-d model, "
                     "default), 1 pools them together (train.py's default)")
    p50.add_argument("--combination", choices=("concat", "add"), default="concat",
                     help="-combination_method of a combined model (default concat)")
    p50.add_argument("--combination-type", choices=PARANMT50M_COMBINATION_TYPES, default=None,
                     help="-combination_type of a combined model (default: read from the pickle's layout)")
    p50.add_argument("--token-type", choices=("word", "trigram"), default=None,
                     help="-wordtype of a single model (default: guessed from the vocabulary)")
    p50.add_argument("--lookup", choices=("paranmt50m", "split"), default="paranmt50m",
                     help="how raw text is read: paranmt50m = the original example.py lookup (exact, default); "
                     "split = exact-match tokenizers (faster, approximate on raw text)")
    _common(p50)
    p50.set_defaults(func=run_paranmt50m)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", required=True, help="model directory to write")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    parser.add_argument("--no-sentence-transformers", action="store_true",
                        help="do not write the sentence-transformers module files")
    add_progress_flag(parser)


def _check(args: argparse.Namespace, inputs: list[str]) -> None:
    """Refuse an output that is an input or that exists without --overwrite, before any work."""
    from ..utils.atomic import check_output

    check_output(args.output, inputs, overwrite=args.overwrite)


def _save(encoder: object, report: object, args: argparse.Namespace, inputs: list[str]) -> int:
    from ..model.convert.saving import save_converted

    path = save_converted(encoder, report, args.output, inputs, overwrite=args.overwrite,
                          sentence_transformers=not args.no_sentence_transformers)
    print(f"wrote {args.output} ({encoder!r}); report: {path}")
    for note in report.notes:
        print(f"note: {note}")
    return 0


def run_pras(args: argparse.Namespace) -> int:
    """Convert a PRAS checkpoint."""
    from ..model.convert.pras import convert_pras

    inputs = [args.checkpoint, args.sp_model]
    _check(args, inputs)
    encoder, report = convert_pras(args.checkpoint, args.sp_model, ignore_moses=args.ignore_moses)
    return _save(encoder, report, args, inputs)


def run_paranmt50m(args: argparse.Namespace) -> int:
    """Convert a ParaNMT-50M pickle."""
    from ..model.convert.paranmt50m import convert_paranmt50m

    _check(args, [args.pickle])
    encoder, report = convert_paranmt50m(args.pickle, combination=args.combination, token_type=args.token_type,
                                         model=args.model, combination_type=args.combination_type, axis=args.axis,
                                         lookup=args.lookup)
    return _save(encoder, report, args, [args.pickle])
