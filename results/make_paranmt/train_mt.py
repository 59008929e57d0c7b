"""Train the small German->English translation model from scratch and measure its BLEU on held-out pairs.

A Marian transformer of size ``small`` (d_model 256, 3+3 layers, 4 heads, FFN 1024, ~7.6M parameters with an 8K
unigram vocabulary trained on both languages) through the package's seq2seq trainer
(:func:`paranmt_hf.paraphrase_generator.train.train_seq2seq`: ``Seq2SeqTrainer``, length-grouped batches of 64,
inverse-square-root learning rate, label smoothing 0.1), stopped by a CPU-time budget (default 30 CPU minutes, one
thread). BLEU: sacrebleu's corpus BLEU (13a tokens, cased, its default signature) of the beam-4 1-best translations
of ``mt-test.tsv``, overall and per source (Tatoeba, Multi30k).

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


def read_tsv(path: Path) -> list[tuple[str, str]]:
    """The two columns of a TSV written by prepare.py."""
    return [tuple(line.split("\t")) for line in path.read_text(encoding="utf-8").splitlines()]  # type: ignore[misc]


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

    import sacrebleu
    import torch

    from paranmt_hf.corpus.translation import DecodingOptions
    from paranmt_hf.paraphrase_generator.generate import ParaphraseGenerator
    from paranmt_hf.paraphrase_generator.train import Seq2SeqTrainingSettings, train_seq2seq

    torch.set_num_threads(args.threads)
    data, model_dir = args.work / "data", args.work / "mt-model"
    result: dict = {"provenance": provenance()}
    if not args.skip_train:
        train = read_tsv(data / "mt-train.tsv")
        settings = Seq2SeqTrainingSettings(epochs=20, max_cpu_minutes=args.max_cpu_minutes, batch_size=args.batch_size,
                                           learning_rate=5e-4, warmup_steps=400, logging_steps=200)
        run = train_seq2seq([de for de, _ in train], [en for _, en in train], model_dir, size=args.size,
                            vocab_size=args.vocab_size, settings=settings, overwrite=True,
                            extra_summary={"data": str(data / "mt-train.tsv")})
        result["training"] = run.summary
    else:
        result["training"] = json.loads((model_dir / "generator_summary.json").read_text(encoding="utf-8"))
    test = read_tsv(data / "mt-test.tsv")
    generator = ParaphraseGenerator.from_pretrained(model_dir)
    start, cpu = time.perf_counter(), time.process_time()
    hyps = generator.paraphrase([de for de, _ in test], DecodingOptions(num_beams=args.num_beams), batch_size=64)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    refs = [en for _, en in test]
    metric = sacrebleu.BLEU()
    bleu = metric.corpus_score(hyps, [refs])
    half = len(test) // 2  # prepare.py writes the Tatoeba test pairs first, then Multi30k's
    result["bleu"] = {"all": bleu.score, "signature": str(metric.get_signature()),
                      "tatoeba": sacrebleu.corpus_bleu(hyps[:half], [refs[:half]]).score,
                      "multi30k": sacrebleu.corpus_bleu(hyps[half:], [refs[half:]]).score,
                      "pairs": len(test), "num_beams": args.num_beams, "decode_seconds": seconds,
                      "decode_cpu_seconds": cpu_seconds}
    result["examples"] = [{"de": de, "reference": en, "translation": h} for (de, en), h in zip(test[:5], hyps[:5],
                                                                                                strict=True)]
    result["examples"] += [{"de": de, "reference": en, "translation": h}
                           for (de, en), h in zip(test[half : half + 5], hyps[half : half + 5], strict=True)]
    atomic_write_json(args.output, result)
    print(json.dumps(result["bleu"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
