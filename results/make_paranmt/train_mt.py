"""Train the small German->English translation model from scratch and measure its BLEU on held-out pairs.

The package's ``paranmt-hf train-translator`` (:func:`paranmt_hf.paraphrase_generator.translator_training.
train_translator`): a Marian transformer of size ``small`` (d_model 256, 3+3 layers, 4 heads, FFN 1024, ~7.6M
parameters with an 8K unigram vocabulary trained on both languages), ``Seq2SeqTrainer`` with length-grouped batches of
64, inverse-square-root learning rate, label smoothing 0.1, stopped by a CPU-time budget (default 30 CPU minutes, one
thread). BLEU: sacrebleu's corpus BLEU (13a tokens, cased, its default signature) of the beam-4 1-best translations
of ``mt-test.tsv``, overall (as the model folder's ``translator_metrics.json`` has it) and per source (Tatoeba,
Multi30k). The same model from the command line:

    paranmt-hf train-translator WORK/data/mt-train.tsv --source-lang de --source-column 1 \
        --test WORK/data/mt-test.tsv --max-steps -1 --epochs 20 --max-cpu-minutes 30 -o WORK/mt-model

    python results/make_paranmt/train_mt.py runs/make_paranmt [--max-cpu-minutes 30] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from paranmt_hf.utils.atomic import atomic_write_json
from paranmt_hf.utils.provenance import provenance

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="the run folder (prepare.py wrote WORK/data)")
    parser.add_argument("--max-cpu-minutes", type=float, default=30.0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--size", default="small")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-beams", type=int, default=4)
    parser.add_argument("--skip-train", action="store_true", help="only measure BLEU of WORK/mt-model")
    parser.add_argument("--output", type=Path, default=HERE / "mt.json", help="the result JSON")
    args = parser.parse_args(argv)

    import torch

    from paranmt_hf.paraphrase_generator.train import Seq2SeqTrainingSettings
    from paranmt_hf.paraphrase_generator.translator_training import bleu, read_bitext, train_translator, translate

    torch.set_num_threads(args.threads)
    data, model_dir = args.work / "data", args.work / "mt-model"
    test_file = data / "mt-test.tsv"
    result: dict = {"provenance": provenance()}
    start, cpu = time.perf_counter(), time.process_time()
    if not args.skip_train:
        settings = Seq2SeqTrainingSettings(epochs=20, max_cpu_minutes=args.max_cpu_minutes, batch_size=args.batch_size,
                                           learning_rate=5e-4, warmup_steps=400, logging_steps=200)
        trained = train_translator([data / "mt-train.tsv"], model_dir, "de", "en", source_column=1, test=[test_file],
                                   size=args.size, vocab_size=args.vocab_size, settings=settings,
                                   num_beams=args.num_beams, overwrite=True)
        test, hyps = trained.held_out, trained.hypotheses
        result["training"] = json.loads((model_dir / "generator_summary.json").read_text(encoding="utf-8"))
    else:
        test = read_bitext([test_file], source_column=1)
        start, cpu = time.perf_counter(), time.process_time()
        hyps = translate(model_dir, [de for de, _ in test], args.num_beams, batch_size=64)
        result["training"] = json.loads((model_dir / "generator_summary.json").read_text(encoding="utf-8"))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    refs = [en for _, en in test]
    overall = bleu(hyps, refs)
    half = len(test) // 2  # prepare.py writes the Tatoeba test pairs first, then Multi30k's
    result["bleu"] = {"all": overall["score"], "signature": overall["signature"],
                      "tatoeba": bleu(hyps[:half], refs[:half])["score"],
                      "multi30k": bleu(hyps[half:], refs[half:])["score"],
                      "pairs": len(test), "num_beams": args.num_beams,
                      ("seconds" if not args.skip_train else "decode_seconds"): seconds,
                      ("cpu_seconds" if not args.skip_train else "decode_cpu_seconds"): cpu_seconds}
    result["examples"] = [{"de": de, "reference": en, "translation": h} for (de, en), h in zip(test[:5], hyps[:5],
                                                                                                strict=True)]
    result["examples"] += [{"de": de, "reference": en, "translation": h}
                           for (de, en), h in zip(test[half : half + 5], hyps[half : half + 5], strict=True)]
    atomic_write_json(args.output, result, overwrite=True)
    print(json.dumps(result["bleu"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
