"""``paranmt-hf publish``: a Hub-ready folder (weights, tokenizer, remote code, sentence-transformers files, card)."""

from __future__ import annotations

import argparse

from .model_loading import add_trust_remote_code_flag, check_model_code
from .parsers import check_hub_ids, command_parser
from .progress import add_progress_flag

EPILOG = """A paraphrase generator folder (train-generator) gets its own card (hub_cards/generator_card.md) with its
evaluation beside the copy baseline, and its re-saved model and tokenizer. A paranmt_hf encoder folder holds
model.safetensors, config.json (auto_map), the remote-code .py files, the tokenizer,
the sentence-transformers files, README.md (model card with model-index from --eval-dir), training_summary.json,
results/<org>__<name>/<revision>/*.json and speed.json. --push uploads it with huggingface_hub (needs network and a
token: `hf auth login` or --token)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``publish`` sub-command."""
    p = command_parser(
        subparsers, "publish", "write a Hub-ready model folder with its model card, and optionally push it",
        "Re-save a model into a Hub-ready folder, check that every file is there and that it reproduces the model, "
        "render its model card, and optionally push it to the Hugging Face Hub.", EPILOG, fill=True)
    p.add_argument("model_dir", help="saved (trained) model folder")
    p.add_argument("--output", required=True, help="Hub folder to write (new or empty)")
    p.add_argument("--eval-dir", default=None, help="`paranmt-hf eval --output` folder with this model's results")
    p.add_argument("--speed", default=None, help="speed benchmark JSON (benchmarks/speed/benchmark.py --json)")
    p.add_argument("--push", default=None, metavar="REPO_ID", help="push the folder to this Hub repository")
    p.add_argument("--private", action="store_true", help="create the pushed repository as private")
    p.add_argument("--token", default=None, help="Hub token (default: the logged-in one)")
    p.add_argument("--model-id", default=None, help="repository id shown in the card (default: --push, else "
                   "paranmt-hf/<model folder name>)")
    p.add_argument("--language", nargs="+", default=None, help="card language codes (default: en)")
    p.add_argument("--license", default="mit", help="license of the weights (default: mit)")
    p.add_argument("--dataset", nargs="+", default=None, help="Hub dataset ids of the training data")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --output folder")
    add_progress_flag(p)
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run, keyword_flags={"output_dir": "--output", "push_repo_id": "--push"})


def run(args: argparse.Namespace) -> int:
    """Build (and push) the Hub folder."""
    from ..hub import publish
    from ..hub.generator_card import is_generator_folder

    check_hub_ids(args, {"--model-id": "model_id", "--push": "push"})
    if is_generator_folder(args.model_dir):
        return _publish_generator(args)
    check_model_code(args)
    published = publish(
        args.model_dir, args.output, eval_dir=args.eval_dir, speed_json=args.speed, push_repo_id=args.push,
        private=args.private, token=args.token, model_id=args.model_id, language=args.language,
        license=args.license, datasets=args.dataset, overwrite=args.overwrite,
    )
    print(f"Hub folder written to {published.folder} ({len(published.files)} files)")
    if published.url:
        print(f"pushed: {published.url}")
    return 0


def _publish_generator(args: argparse.Namespace) -> int:
    """A paraphrase generator's Hub folder: re-saved model and tokenizer, generator card, summary, evaluation."""
    from ..hub import PublishError, push_folder
    from ..hub.generator_card import publish_generator
    from ..paraphrase_generator.train import GeneratorError
    from ..utils.atomic import OutputExistsError

    model_id = args.model_id or args.push
    try:
        files = publish_generator(args.model_dir, args.output, model_id, args.language, args.license, args.dataset,
                                  args.overwrite)
        url = push_folder(args.output, args.push, private=args.private, token=args.token,
                          commit_message="Upload paraphrase generator (paranmt-hf publish)") if args.push else None
    except (PublishError, GeneratorError, RuntimeError, OutputExistsError, FileNotFoundError) as err:
        raise SystemExit(f"paranmt-hf publish: {err}") from err
    print(f"Hub folder written to {args.output} ({len(files)} files)")
    if url:
        print(f"pushed: {url}")
    return 0
