"""What a model card says about a model: its encoder and its training run (read from the model folder)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.convert.saving import REPORT_NAME

if TYPE_CHECKING:
    from ..model.encoder import ParaNMTEncoder

SUMMARY_FILE = "training_summary.json"
ORIGINAL_CODE = {".pt": "https://github.com/jwieting/paraphrastic-representations-at-scale",
                 ".pickle": "https://github.com/jwieting/para-nmt-50m"}
"""The authors' code that trained the released checkpoints, by the checkpoint's suffix (PRAS ``.pt``, ParaNMT-50M
``.pickle``)."""
LANGUAGE_NAMES = {
    "en": "English", "ar": "Arabic", "cs": "Czech", "de": "German", "es": "Spanish", "fr": "French", "ru": "Russian",
    "tr": "Turkish", "zh": "Chinese",
}
ISO_639_1 = {"ara": "ar", "ces": "cs", "cmn": "zh", "deu": "de", "eng": "en", "fra": "fr", "rus": "ru", "spa": "es",
             "tur": "tr"}
"""Two-letter codes (the Hub's ``language:`` metadata) of the three-letter codes of the Tatoeba sets and file names."""
_PATH_KEYS = ("output_dir",)


def _lowercases(tokenizer_json: str | dict[str, Any] | None) -> bool:
    """Whether a ``tokenizers`` tokenizer (its JSON) lower-cases its input."""
    if tokenizer_json is None:
        return False
    spec = json.loads(tokenizer_json) if isinstance(tokenizer_json, str) else tokenizer_json
    return "Lowercase" in json.dumps(spec.get("normalizer"))


def encoder_info(encoder: ParaNMTEncoder, model_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The encoder facts of the card: kinds, sizes, tokenizer traits and which loaders need what."""
    from ..modeling.kinds_paranmt import ENCODER_KIND_SPECS
    from ..modeling.tokenization_paranmt import ParaNMTTokenizer

    config = encoder.config
    components = config.resolved_components()
    vocab = encoder.component_vocab_sizes(encoder.tokenizer)
    kinds = [c["kind"] for c in components]
    custom_tokenizer = isinstance(encoder.tokenizer, ParaNMTTokenizer)
    if custom_tokenizer:
        specs = encoder.tokenizer.component_specs()
        lowercase = all(s.get("kind") == "trigram" or _lowercases(s.get("tokenizer")) for s in specs)
    else:
        lowercase = _lowercases(encoder.tokenizer.backend_tokenizer.to_str())
    rows = [
        {"kind": c["kind"], "text": ENCODER_KIND_SPECS[c["kind"]].description, "vocab_size": v,
         "embedding_dim": c["embedding_dim"], "output_size": size, "drop_unknown": bool(c["drop_unknown_tokens"])}
        for c, v, size in zip(components, vocab, config.component_output_sizes(), strict=True)
    ]
    return {
        "kinds": kinds,
        "kind": "+".join(kinds),
        "title": " + ".join(ENCODER_KIND_SPECS[k].description for k in kinds),
        "components": rows,
        "combination": config.combination if len(kinds) > 1 else None,
        "pooling": config.pooling,
        "embedding_dim": encoder.embedding_dim,
        "n_parameters": int(sum(p.numel() for p in encoder.model.parameters())),
        "averaging": all(ENCODER_KIND_SPECS[k].averaging for k in kinds),
        "lowercase": lowercase,
        "custom_tokenizer": custom_tokenizer,
        "static": (Path(model_dir) / "static" / "modules.json").is_file(),
        "st_layout": (Path(model_dir) / "modules.json").is_file(),
    }


def parse_source(source: str) -> dict[str, Any]:
    """A training source of ``training_summary.json`` as ``{"config", "files"}`` (file names only, no local paths).

    Sources are written as ``"CONFIG:PATH,...[@N]"`` / ``"PATH[@N]"`` strings or as the repr of a ``PairSource``
    (``repeat`` is added when a source was repeated N > 1 times per epoch).
    """
    if source.startswith("PairSource("):
        config = re.search(r"config='([^']*)'", source)
        files_part = re.search(r"files=\(([^)]*)\)", source)
        files = re.findall(r"'([^']*)'", files_part.group(1)) if files_part else []
        return {"config": config.group(1) if config else "pairs", "files": [os.path.basename(f) for f in files]}
    from ..training.data import split_repeat

    source, repeat = split_repeat(source)
    config, sep, rest = source.partition(":")
    if not sep or "/" in config or "\\" in config:
        config, rest = "pairs", source
    out: dict[str, Any] = {"config": config, "files": [os.path.basename(p) for p in rest.split(",") if p]}
    if repeat != 1:
        out["repeat"] = repeat
    return out


def trained_languages(training: dict[str, Any] | None) -> list[str]:
    """Languages a model was trained for: English, plus the other side of every X-English bitext source.

    ``training`` is :func:`training_info`'s dict; codes are ISO 639-1 where one exists (``tatoeba-en-es`` -> ``es``).
    Without a training record the model is taken as English (the papers' English models).
    """
    from ..data.configs import bitext_sides

    languages = ["en"]
    for source in (training or {}).get("sources", []):
        if source["config"] != "bitext":
            continue
        for name in source["files"]:
            sides = bitext_sides(name)
            code = ISO_639_1.get(sides[1], sides[1]) if sides else None
            if code and code not in languages:
                languages.append(code)
    return languages


PARANMT_DATA_LICENCE = "ParaNMT-50M: derived from CzEng 1.6, non-commercial research and educational use only"
"""The terms of the data the papers' released models were trained on (a converted checkpoint's)."""


def data_licences(training: dict[str, Any] | None, converted: bool = False) -> list[tuple[str, str]]:
    """``(training file, its terms)`` for the card's licence section.

    Files the project's data layout knows (``paranmt-hf data sources``) get their source's licence; other files are
    the user's own, whose terms the card cannot know. A checkpoint converted from the papers' releases
    (``converted``) was trained on ParaNMT-50M.
    """
    from ..fetch.registry import SOURCES

    by_name = {Path(out).name: source.licence for source in SOURCES.values() for out in source.outputs}
    out: list[tuple[str, str]] = []
    for source in (training or {}).get("sources", []):
        for name in source["files"]:
            base = Path(name).name
            licence = by_name.get(base, "your own data: its licence is not recorded here; state it before sharing")
            if (base, licence) not in out:
                out.append((base, licence))
    if converted and not out:
        out.append(("ParaNMT-50M (the papers' training data)", PARANMT_DATA_LICENCE))
    return out


def language_name(code: str) -> str:
    """English name of a language code (the code itself when unknown)."""
    return LANGUAGE_NAMES.get(ISO_639_1.get(code, code), code)


def read_training_summary(model_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``training_summary.json`` of a trained model folder, or ``None`` when there is none."""
    path = Path(model_dir) / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err


def public_training_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without local paths: no output folder; sources as ``"CONFIG:FILE,..."`` with file names only."""
    out = {k: v for k, v in summary.items() if k not in _PATH_KEYS}
    if "sources" in out:
        out["sources"] = [
            f"{p['config']}:{','.join(p['files'])}" + (f"@{p['repeat']}" if "repeat" in p else "")
            for p in map(parse_source, map(str, out["sources"]))
        ]
    return out


def training_info(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """The card's training section: recipe rows, sources, run facts and the last dev scores."""
    if summary is None:
        return None
    recipe = dict(summary.get("recipe") or {})
    extra = recipe.pop("extra", None) or {}
    description = recipe.pop("description", "")
    rows = [(k, v) for k, v in recipe.items() if v is not None] + [(f"extra.{k}", v) for k, v in extra.items()]
    dev = summary.get("dev_scores") or []
    seconds = summary.get("seconds")
    return {
        "recipe_name": recipe.get("name"),
        "recipe": recipe,
        "description": description,
        "recipe_rows": rows,
        "sources": [parse_source(str(s)) for s in summary.get("sources", [])],
        "seed": summary.get("seed"),
        "steps": summary.get("steps"),
        "train_pairs": summary.get("train_pairs"),
        "world_size": summary.get("world_size"),
        "hours": None if seconds is None else round(float(seconds) / 3600, 2),
        "dev": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in dev[-1].items()} if dev else None,
    }


def training_code(model_dir: str | os.PathLike[str]) -> str | None:
    """Where the code that trained the model in ``model_dir`` is (``model_meta.json``'s ``public_training_code``).

    The authors' repository for a checkpoint converted by ``paranmt-hf convert`` (``conversion_report.json``), else
    this project's code (:func:`paranmt_hf.utils.provenance.source_url`; ``None`` while it has no public address).
    """
    from ..utils.provenance import source_url

    report = Path(model_dir) / REPORT_NAME
    if report.is_file():
        try:
            suffix = Path(str(json.loads(report.read_text(encoding="utf-8")).get("source", ""))).suffix
        except ValueError:
            suffix = ""
        if suffix in ORIGINAL_CODE:
            return ORIGINAL_CODE[suffix]
    return source_url()
