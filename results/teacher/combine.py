"""A trained model + the teacher's distilled subword table as one ``trigram+subword`` model, weight chosen on dev.

    python results/teacher/combine.py runs/models/trigram-best NAME [--weights 0.5 0.75 1 1.25 1.5]
    python results/teacher/combine.py runs/models/joint-frozen NAME   # a trained trigram+subword: reweight it

``paranmt_hf.model.build.combine_encoders`` concatenates the trained model with the distilled table (a trained
combination keeps its own), then ``paranmt_hf.model.distill.balance_subword`` scales the subword table so that its
part of the embedding has ``w`` times the median norm of the rest on the training sentences ``paranmt-hf train`` uses
(the recipe field ``teacher_weight``). ``w`` is chosen on dev (STS17 en-en + STS-B validation);
the chosen model's test numbers are computed once and appended to results/teacher/runs.jsonl; the model is saved
under runs/models/NAME.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from explore import DEV, RUNS, TEST, evaluate, record_run  # noqa: E402


def sample_corpus() -> list[str]:
    """Every sentence of the main job's training pairs (for a corpus vocabulary)."""
    from explore import sources

    return [s for pairs, _ in sources() for p in pairs for s in p]


def training_sample() -> list[str]:
    """The sentences ``paranmt-hf train`` balances on: the first anchors of the main job's shuffled pairs."""
    from paranmt_hf.training.data import load_pairs
    from paranmt_hf.training.teacher import BALANCE_SENTENCES

    data = Path(os.environ.get("PARANMT_HF_DATA", ROOT.parent / "shared" / "data")) / "train"
    sources = [
        str(data / "flickr30k-caption-pairs.tsv.gz"),
        f"processed-5m:{data / 'paranmt5m-sample-10k.tsv.gz'}@10",
        f"pairs:{RUNS / 'data' / 'tatoeba-pivots.tsv.gz'}@3",
    ]
    return list(load_pairs(sources, None, 0)["anchor"][:BALANCE_SENTENCES])


def main() -> None:
    import torch

    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.model.build import combine_encoders
    from paranmt_hf.model.distill import balance_subword, build_teacher_encoder, distill_teacher

    torch.set_num_threads(1)
    from paranmt_hf.utils.provenance import provenance

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="a trained model directory")
    parser.add_argument("name", help="run name (its line in runs.jsonl; the model goes to runs/models/NAME)")
    parser.add_argument("--vocab-min-count", type=int, default=None, help="distil corpus words seen this often too")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0])
    args = parser.parse_args()
    record = provenance()  # at the start: the load average the run began under
    trained = ParaNMTEncoder.from_pretrained(args.model)
    sample = training_sample()
    teacher = None
    if len(trained.model.components) == 1:
        vocabulary = None
        if args.vocab_min_count:  # model2vec also embeds these whole words with the teacher
            from paranmt_hf.model.tokenization.word import count_words

            counts = count_words(sorted(set(sample_corpus())))
            vocabulary = [w for w, c in counts.most_common() if c >= args.vocab_min_count and w.isalpha()]
        static = distill_teacher(vocabulary=vocabulary, cache_dir=RUNS / "distilled")
        teacher = build_teacher_encoder("subword", ["x"], static_model=static)

    def make(w: float) -> ParaNMTEncoder:
        base = ParaNMTEncoder.from_pretrained(args.model)
        combined = combine_encoders([base, teacher]) if teacher is not None else base
        balance_subword(combined, sample, w)
        return combined

    sweep = {}
    for w in args.weights:
        combined = make(w)
        dev = evaluate(combined, DEV)
        sweep[w] = {"dev": dev, "dev_mean": round(float(np.mean(list(dev.values()))), 2)}
        print(w, sweep[w], flush=True)
    best = max(sweep, key=lambda w: sweep[w]["dev_mean"])
    combined = make(best)
    combined.save_pretrained(RUNS / "models" / args.name)
    test = evaluate(combined, [*TEST, "STSBenchmark"])
    run = {
        "name": args.name,
        "cfg": {"combine": args.model, "teacher_weight": best, "sweep": sweep},
        "command": "python results/teacher/combine.py " + " ".join(sys.argv[1:]),
        "commit": record["git_commit"],
        "provenance": record,
        "steps": 0,
        "dev": sweep[best]["dev"],
        "dev_mean": sweep[best]["dev_mean"],
        "test": test,
        "sts12_16": round(float(np.mean([test[t] for t in TEST])), 2),
        "load_average": os.getloadavg(),
    }
    record_run(run)


if __name__ == "__main__":
    main()
