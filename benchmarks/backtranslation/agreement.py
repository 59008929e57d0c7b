"""How much CTranslate2 and transformers agree: greedy and beam search, float32 and int8, Marian / NLLB / M2M100.

Usage:

    python benchmarks/backtranslation/agreement.py [--sentences 200] [--beams 4]

Three small models built in code with seeded random weights and vocabularies trained on made-up sentences
(:mod:`paranmt_hf.corpus.synthetic_translation`, the same as the tests build); each translates the same sentences with
paranmt_hf's two engines. For each model and setting: the share of sentences whose 1-best (and whole n-best list)
has the same tokens, and the largest / mean absolute difference of the translation cost where the tokens agree.
Random models are a worst case for beam search (most candidates run to the length limit, where the engines'
stopping rules differ most). Records the run under ``agreement`` in ``backtranslation.json`` here (with its
provenance) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CODES = {"marian": {}, "nllb": {"source_lang": "deu_Latn", "target_lang": "eng_Latn"},
         "m2m100": {"source_lang": "de", "target_lang": "en"}}


def compare(hf: list, ct2: list) -> dict:
    """Agreement of two engines' n-best lists."""
    same_best = sum(a[0].token_ids == b[0].token_ids for a, b in zip(hf, ct2, strict=True))
    same_list = sum([c.token_ids for c in a] == [c.token_ids for c in b] for a, b in zip(hf, ct2, strict=True))
    differences = [abs(x.cost - y.cost) for a, b in zip(hf, ct2, strict=True) for x, y in zip(a, b, strict=False)
                   if x.token_ids == y.token_ids]
    return {"sentences": len(hf), "same_1best": same_best, "same_nbest_list": same_list,
            "share_same_1best": round(same_best / len(hf), 4),
            "max_cost_difference": max(differences) if differences else None,
            "mean_cost_difference": sum(differences) / len(differences) if differences else None,
            "finished_1best_transformers": sum(a[0].finished for a in hf)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--json", default=str(HERE / "backtranslation.json"), help="where to record the run")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the test fixtures
    from _synthetic_translation import build_translation_model, model_sentences

    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator
    from paranmt_hf.corpus.translation.transformers_engine import (
        DecodingOptions,
        TransformersOptions,
        TransformersTranslator,
    )
    from paranmt_hf.utils.provenance import provenance

    record = provenance(packages=("paranmt_hf", "torch", "transformers", "ctranslate2", "numpy"))
    train, texts = model_sentences(300, seed=0), model_sentences(args.sentences, seed=11)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, codes in CODES.items():
            model = build_translation_model(Path(tmp) / kind, train, kind=kind, seed=1)
            for beams, num_return in ((1, 1), (args.beams, 1), (args.beams, args.beams)):
                options = DecodingOptions(num_beams=beams, num_return=num_return, **codes)
                hf = TransformersTranslator(model, options, TransformersOptions(threads=1)).translate(texts).hypotheses
                for compute in ("float32", "int8"):
                    ct2 = CTranslate2Translator(model, options, CTranslate2Options(
                        compute_type=compute, threads=1, cache_dir=str(Path(tmp) / "ct2"))).translate(texts).hypotheses
                    row = {"model": kind, "num_beams": beams, "num_return": num_return, "compute": compute,
                           **compare(hf, ct2)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    result = {"benchmark": "CTranslate2 vs transformers outputs on random models built in code",
              "provenance": record, "rows": rows}
    from paranmt_hf.utils.atomic import atomic_write_json

    path = Path(args.json)
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    atomic_write_json(path, {**recorded, "agreement": result}, indent=1)
    print("| model | beams | candidates | compute | same 1-best | same n-best list | max cost diff |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for r in rows:
        diff = "-" if r["max_cost_difference"] is None else f"{r['max_cost_difference']:.2g}"
        print(f"| {r['model']} | {r['num_beams']} | {r['num_return']} | {r['compute']} | {r['same_1best']}/"
              f"{r['sentences']} | {r['same_nbest_list']}/{r['sentences']} | {diff} |")


if __name__ == "__main__":
    main()
