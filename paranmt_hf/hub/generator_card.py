"""The card and Hub folder of a paraphrase generator (``paranmt-hf publish GENERATOR_DIR --output HUB_DIR``).

A generator folder (written by ``paranmt-hf train-generator``) holds a ``transformers`` seq2seq model, its tokenizer,
``generator_summary.json`` and, when it was evaluated, ``evaluation.json``. :func:`publish_generator` re-saves the
model and tokenizer from a fresh load into a new folder (no checkpoints or stale files), checks that the re-saved
model generates the same outputs, renders ``README.md`` from ``hub_cards/generator_card.md`` and copies the summary
and evaluation; ``push`` uploads it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ..corpus.translation.transformers_engine import DecodingOptions
from ..paraphrase_generator.generate import ParaphraseGenerator
from ..paraphrase_generator.train import SUMMARY_NAME
from ..paraphrase_generator.train_generator import EVALUATION_NAME
from ..utils.atomic import atomic_output
from .card import default_model_id

TEMPLATE_NAME = "generator_card.md"
EXAMPLE_SENTENCES = ["oh, that's a handsome women, that is.", "overall, i think it's a decent buy."]
METRICS = [("cosine_input_output", "cosine(input, output)"), ("cosine_output_reference", "cosine(output, reference)"),
           ("self_bleu", "BLEU against the input (corpus, 0-100)"),
           ("sentence_bleu_vs_input", "smoothed sentence BLEU against the input (mean)"),
           ("trigram_overlap_vs_input", "trigram overlap with the input (mean)"),
           ("copy_rate", "share of outputs copying the input"),
           ("bleu_vs_reference", "BLEU against the reference paraphrase (corpus, 0-100)")]


def is_generator_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a generator folder (it holds ``generator_summary.json``)."""
    return (Path(path) / SUMMARY_NAME).is_file()


def _read_json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def generator_limitations(summary: dict[str, Any], evaluation: dict[str, Any] | None) -> list[str]:
    """What a user should know before relying on the generator."""
    items = ["English only, and only the domains of its training pairs; it canonicalises and shortens as much as it "
             "paraphrases (ParaNMT-50M §6 describes the same behaviour)."]
    base = summary.get("base", {})
    if base.get("from_scratch"):
        items.append(f"A small model trained from scratch ({summary.get('steps', '?')} steps on "
                     f"{summary.get('data', {}).get('training_pairs', '?'):,} pairs): fluent on short, common "
                     "sentences, unreliable on long or rare ones.")
    if evaluation is not None and evaluation["generator"].get("copy_rate", 0) > 0.3:
        items.append(f"It copies its input {evaluation['generator']['copy_rate']:.0%} of the time with beam "
                     "search; sampling (--do-sample) or n-best lists give more varied outputs.")
    items.append("Paraphrases can change facts (numbers, names, negation); check outputs where meaning matters.")
    return items


def render_generator_card(model_dir: str | os.PathLike[str], model_id: str | None = None,
                          language: list[str] | None = None, license: str = "mit",  # noqa: A002
                          datasets: list[str] | None = None, generator: ParaphraseGenerator | None = None) -> Any:
    """The ``huggingface_hub.ModelCard`` of a generator folder."""
    from huggingface_hub import ModelCard, ModelCardData

    model_dir = Path(model_dir)
    summary = _read_json(model_dir / SUMMARY_NAME)
    if summary is None:
        raise FileNotFoundError(f"{model_dir} is not a generator folder (no {SUMMARY_NAME})")
    evaluation = _read_json(model_dir / EVALUATION_NAME)
    generator = generator or ParaphraseGenerator.from_pretrained(model_dir)
    model = generator.model
    base = summary.get("base", {})
    info = {"architecture": type(model).__name__, "shape": base.get("shape"),
            "base": f"random initialisation (size `{base.get('size')}`)" if base.get("from_scratch")
            else f"`{base.get('model')}`",
            "n_parameters": sum(p.numel() for p in model.parameters()), "vocab_size": len(generator.tokenizer)}
    summary.setdefault("data", {}).setdefault("bounds", {})
    summary["data"].setdefault("both_directions", True)
    if model_id is not None:
        from .publish import check_repo_id

        check_repo_id(model_id, "model_id")
    model_id = model_id or default_model_id(model_dir)
    card_data = ModelCardData(model_name=model_id, language=language or ["en"], license=license,
                              library_name="transformers", pipeline_tag="text2text-generation",
                              tags=["paraphrase", "paraphrase-generation", "paranmt", "text2text-generation"],
                              datasets=datasets or None)
    template = Path(str(resources.files("paranmt_hf.hub_cards") / TEMPLATE_NAME))
    card = ModelCard.from_template(card_data, template_path=str(template), model_id=model_id, model=info,
                                   training=summary, evaluation=evaluation,
                                   examples=(evaluation or {}).get("examples", [])[:8], metrics=METRICS,
                                   limitations=generator_limitations(summary, evaluation),
                                   sentences=EXAMPLE_SENTENCES,
                                   sentences_literal=json.dumps(EXAMPLE_SENTENCES, ensure_ascii=False))
    return ModelCard(re.sub(r"\n{3,}", "\n\n", card.content))


def publish_generator(model_dir: str | os.PathLike[str], output: str | os.PathLike[str], model_id: str | None = None,
                      language: list[str] | None = None, license: str = "mit",  # noqa: A002
                      datasets: list[str] | None = None, overwrite: bool = False) -> list[str]:
    """Write the Hub folder of a generator (re-saved model and tokenizer, card, summary, evaluation).

    Returns the folder's files. Raises RuntimeError when the re-saved model does not generate what the original does.
    """
    model_dir = Path(model_dir)
    generator = ParaphraseGenerator.from_pretrained(model_dir)
    with atomic_output(output, [model_dir], overwrite, directory=True) as tmp:
        generator.model.save_pretrained(tmp)
        generator.tokenizer.save_pretrained(tmp)
        for name in (SUMMARY_NAME, EVALUATION_NAME):
            if (model_dir / name).is_file():
                shutil.copy2(model_dir / name, tmp / name)
        reloaded = ParaphraseGenerator.from_pretrained(tmp)
        settings = DecodingOptions(num_beams=2, max_new_tokens=24)
        if reloaded.paraphrase(EXAMPLE_SENTENCES, settings) != generator.paraphrase(EXAMPLE_SENTENCES, settings):
            raise RuntimeError(f"the re-saved generator in {tmp} does not generate what {model_dir} generates")
        render_generator_card(model_dir, model_id, language, license, datasets, generator).save(tmp / "README.md")
        files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
    return files
