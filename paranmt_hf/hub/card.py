"""Render the model card (``README.md``) of a model folder from ``hub_cards/model_card.md``.

```python
from paranmt_hf.hub import render_model_card

card = render_model_card("my-model", eval_dir="eval-results", model_id="me/paranmt-sp")
card.save("my-model/README.md")          # huggingface_hub.ModelCard.load parses it back
```

The YAML metadata comes from ``huggingface_hub.ModelCardData``: ``model-index`` holds the evaluation JSON's numbers
(:mod:`paranmt_hf.hub.eval_results`). ``library_name`` is ``sentence-transformers``: the folder's ``modules.json``
uses only stock sentence-transformers modules, the Hub serves ``pipeline_tag: sentence-similarity`` through that
library, and mteb's leaderboard loads such models with its sentence-transformers wrapper. The card still shows the
usage of every loader (paranmt_hf, ``AutoModel``, ``SentenceTransformer``, mteb).
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.convert.saving import REPORT_NAME
from .eval_results import EvalSummary, build_eval_results, eval_tables, load_eval_results
from .model_info import (
    ISO_639_1,
    data_licences,
    encoder_info,
    language_name,
    read_training_summary,
    trained_languages,
    training_info,
)
from .speed import speed_info

if TYPE_CHECKING:
    from huggingface_hub import ModelCard

    from ..model.encoder import ParaNMTEncoder

TEMPLATE_NAME = "model_card.md"
LIBRARY_NAME = "sentence-transformers"
EXAMPLE_SENTENCES = ["A man is playing a guitar.", "Someone plays the guitar.", "A dog runs through the snow."]


def template_path() -> Path:
    """The Jinja template of the model card (``hub_cards/model_card.md``, installed as ``paranmt_hf.hub_cards``)."""
    return Path(str(resources.files("paranmt_hf.hub_cards") / TEMPLATE_NAME))


def default_model_id(model_dir: str | os.PathLike[str]) -> str:
    """The repository id used in the card's snippets when none is given: ``paranmt-hf/<folder name>``."""
    return f"paranmt-hf/{Path(model_dir).resolve().name}"


def _tags(info: dict[str, Any], has_eval: bool) -> list[str]:
    tags = ["sentence-transformers", "sentence-similarity", "feature-extraction", "paranmt", "paraphrase"]
    if info["averaging"]:
        tags.append("static-embeddings")
    tags += [f"{k}-encoder" for k in dict.fromkeys(info["kinds"])]
    tags.append("custom_code")
    if has_eval:
        tags.append("mteb")
    return tags


def limitations(info: dict[str, Any], training: dict[str, Any] | None, language: list[str]) -> list[str]:
    """The card's limitation bullet points for this model."""
    out = []
    bitext = training is not None and any(s["config"] == "bitext" for s in training["sources"])
    if language == ["en"] and not bitext:
        out.append("English only: trained on English paraphrases; other languages are mostly out of vocabulary.")
    elif bitext:
        names = ", ".join(language_name(code) for code in language)
        out.append(f"Trained for {names} only (English paraphrases and English-X bitext). Other languages had no "
                   "training data: their text is cut into pieces learned from these languages, and their scores "
                   "(e.g. Tatoeba ara, cmn, rus, tur) show what carries over, not a supported use.")
        if any("tatoeba" in f.lower() for s in training["sources"] if s["config"] == "bitext" for f in s["files"]):
            out.append("Its bitext includes Tatoeba itself (pairs sharing a sentence with the LASER Tatoeba test sets "
                       "removed): Tatoeba mining is in-domain for it, easier than for models that left Tatoeba out "
                       "(PRAS, LASER's test protocol), so its Tatoeba errors are not comparable with theirs.")
    if info["lowercase"]:
        out.append("Input is lower-cased: case carries no information.")
    if info["averaging"]:
        out.append("Averaging model: word order is ignored (\"a dog bites a man\" and \"a man bites a dog\" get the "
                   "same embedding).")
    else:
        out.append("Recurrent model: slower than the averaging encoders, and sentences are read token by token.")
    if "word" in info["kinds"]:
        out.append("Words outside the vocabulary share the unknown token's embedding" + (
            " (or are left out of the average)" if any(c["drop_unknown"] for c in info["components"]) else "") + ".")
    if info["custom_tokenizer"]:
        out.append("The tokenizer (character trigrams) is custom code: `AutoTokenizer` needs `trust_remote_code=True`"
                   " or `import paranmt_hf` first.")
    if info["static"]:
        out.append("The `static/` StaticEmbedding copy gives every text the same embedding (it is written only where "
                   "the unknown-token row is zero); model2vec loading it leaves unknown pieces out of the mean: the "
                   "same cosines.")
    out.append("Trained for paraphrastic similarity (symmetric, sentence-level); not tuned for question-passage "
               "retrieval, classification or long documents.")
    if training is None:
        out.append("No `training_summary.json` in the model folder: it may be untrained or converted from the "
                   "original checkpoints; check the evaluation before use.")
    return out


def _trained_for(subset: str, language: list[str]) -> bool:
    """Whether a bitext subset (``"spa-eng"``) pairs English with a language of ``language`` (ISO 639-1 codes)."""
    other = next((code for code in subset.split("-") if code != "eng"), "eng")
    return ISO_639_1.get(other, other) in language


def card_context(
    encoder: ParaNMTEncoder,
    model_dir: str | os.PathLike[str],
    model_id: str,
    evaluation: EvalSummary | None = None,
    speed_json: str | os.PathLike[str] | None = None,
    training_summary: dict[str, Any] | None = None,
    language: list[str] | None = None,
    results_path: str | None = None,
) -> dict[str, Any]:
    """Every variable of the template except ``card_data`` (the YAML, added by ``ModelCard.from_template``)."""
    info = encoder_info(encoder, model_dir)
    training = training_info(training_summary)
    language = language or trained_languages(training)
    tables = eval_tables(evaluation) if evaluation is not None else None
    if tables is not None:  # each bitext row says whether the model was trained for its language
        tables["bitext"] = [(*row, _trained_for(row[1], language)) for row in tables["bitext"]]
    return {
        "model_id": model_id,
        "model": info,
        "training": training,
        "languages": {"codes": language, "names": [language_name(c) for c in language],
                      "bitext": training is not None and any(s["config"] == "bitext" for s in training["sources"])},
        "evaluation": tables,
        "results_path": results_path,
        "speed": speed_info(speed_json, info["kinds"]),
        "limitations": limitations(info, training, language),
        "sentences": EXAMPLE_SENTENCES,
        "install": install_line(),
        "data_licences": data_licences(training, (Path(model_dir) / REPORT_NAME).is_file()),
    }


def install_line() -> str:
    """How the card tells a reader to install paranmt_hf: it is not on PyPI, so from its source.

    ``pip install "paranmt-hf @ git+URL"`` where this project's code is published
    (:func:`paranmt_hf.utils.provenance.source_url`: ``$PARANMT_HF_SOURCE_URL``, the package metadata or the
    checkout's ``origin``), else a checkout of the source.
    """
    from ..utils.provenance import source_url

    url = source_url()
    if url:
        return f'pip install "paranmt-hf @ git+{url}"'
    return "pip install -e path/to/paranmt_hf  # a checkout of its source: paranmt_hf is not on PyPI"


def render_model_card(
    model_dir: str | os.PathLike[str],
    eval_dir: str | os.PathLike[str] | EvalSummary | None = None,
    speed_json: str | os.PathLike[str] | None = None,
    *,
    model_id: str | None = None,
    encoder: ParaNMTEncoder | None = None,
    training_summary: dict[str, Any] | None = None,
    language: str | list[str] | None = None,
    license: str = "mit",  # noqa: A002 - the card field's name
    datasets: list[str] | None = None,
    results_path: str | None = None,
) -> ModelCard:
    """The model card of a saved model folder.

    Args:
        model_dir: the model folder (``ParaNMTEncoder.save_pretrained`` output, possibly trained).
        eval_dir: ``paranmt-hf eval --output`` folder or an ``EvalSummary`` (``None``: no evaluation, no model-index).
        speed_json: a speed benchmark JSON (``benchmarks/speed``) for the speed section.
        model_id: Hub repository id used in the usage snippets (default ``paranmt-hf/<folder name>``).
        encoder: the already loaded encoder of ``model_dir`` (loaded when ``None``).
        training_summary: the training run (default: ``model_dir/training_summary.json`` when present).
        language: ISO 639-1 code(s) (default: English plus the other side of every bitext source it trained on).
        license: license of the weights.
        datasets: Hub dataset ids of the training data (card metadata).
        results_path: where the evaluation JSON sits in the published folder (mentioned in the card).

    Returns:
        a ``huggingface_hub.ModelCard``; ``.save(path)`` writes it.
    """
    from huggingface_hub import ModelCard, ModelCardData

    if encoder is None:
        from ..model.encoder import ParaNMTEncoder

        encoder = ParaNMTEncoder.from_pretrained(model_dir)
    model_id = model_id or default_model_id(model_dir)
    if training_summary is None:
        training_summary = read_training_summary(model_dir)
    evaluation = (eval_dir if isinstance(eval_dir, EvalSummary) or eval_dir is None
                  else load_eval_results(eval_dir))
    languages = [language] if isinstance(language, str) else list(language or [])
    languages = languages or trained_languages(training_info(training_summary))
    context = card_context(encoder, model_dir, model_id, evaluation, speed_json, training_summary, languages,
                           results_path)
    eval_results = build_eval_results(evaluation) if evaluation is not None else []
    card_data = ModelCardData(
        model_name=model_id,
        language=languages,
        license=license,
        library_name=LIBRARY_NAME,
        pipeline_tag="sentence-similarity",
        tags=_tags(context["model"], evaluation is not None),
        datasets=datasets or None,
        eval_results=eval_results or None,
    )
    card = ModelCard.from_template(card_data, template_path=str(template_path()), weights_license=license, **context)
    return ModelCard(re.sub(r"\n{3,}", "\n\n", card.content))
