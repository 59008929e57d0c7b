"""Speed of the converted 4096-d ParaNMT-50M BiLSTM-Avg model on one CPU core (sentences per second).

    python benchmarks/conversion/bilstm4096.py [--pickle bilstmavg-4096-40.pickle] [--sentences 1000]

Without ``--pickle``, a pickle in the exact released format is written first: ``[We, forward LSTM (17 arrays),
backward LSTM (17 arrays), words]`` with 300-d word embeddings, ``-dim 2048`` LSTMs (``-axis 2``: 4096-d sentence
embeddings) and random float32 weights (speed does not depend on the values). It is converted with
``convert_paranmt50m(model="bilstmavg")`` (the ``paranmt-hf convert paranmt50m --model bilstmavg`` path) and
``encode`` embeds raw STS sentences from ``$PARANMT_HF_DATA`` (sorted into batches of similar length, as
``ParaNMTEncoder.encode`` does) with ``torch.set_num_threads(1)``, for several batch sizes. Baseline in the same run:
the same model with ``torch.nn.LSTM`` (no peepholes; PyTorch's fused C++ LSTM) in place of the peephole LSTM.

Records the run under ``bilstm4096`` in ``benchmarks/conversion/conversion.json`` (command, git commit,
environment and load average included).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from paranmt_hf import ParaNMTEncoder

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the released-format pickle writer (paranmt50m_original.save_params)
sys.path.insert(0, str(HERE.parent / "speed"))

from models import sts_sentences  # noqa: E402 - the speed benchmark's inputs (unique STS12-16 sentences)


def released_format_pickle(path: Path, vocab_size: int, dim: int, units: int, seed: int = 0) -> None:
    """A ``bilstmavg`` pickle as ``models.save_params`` writes it (Python 2 protocol 2, float32 arrays)."""
    import paranmt50m_original as orig

    from paranmt_hf.utils.paths import data_dir

    rng = np.random.default_rng(seed)
    words = (orig.py2_lower(w) for s in sts_sentences(data_dir()) for w in s.split())
    vocab = list(dict.fromkeys(words))[: vocab_size - 1]
    vocab += [f"w{i}" for i in range(vocab_size - 1 - len(vocab))]
    we = rng.normal(size=(vocab_size, dim)).astype(np.float32)
    layers = [orig.lstm_arrays(rng, dim, units) for _ in range(2)]
    for layer in layers:
        layer[-2][:] = 0.0  # cell_init, hid_init: zeros as in the released model (learn_init=False)
        layer[-1][:] = 0.0
    orig.save_params(path, [we, *layers[0], *layers[1]], orig.make_vocab(vocab))


def time_encode(encoder: ParaNMTEncoder, sentences: list[str], batch_size: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``encode`` (CPU time is what one core spends: robust on a busy machine)."""
    encoder.encode(sentences[: min(len(sentences), batch_size)], batch_size=batch_size, num_processes=1)  # warm-up
    started, cpu = time.perf_counter(), time.process_time()
    encoder.encode(sentences, batch_size=batch_size, num_processes=1, show_progress_bar=False)
    return time.perf_counter() - started, time.process_time() - cpu


def torch_lstm_baseline(encoder: ParaNMTEncoder) -> ParaNMTEncoder:
    """The same architecture with torch.nn.LSTM (no peepholes) and the same tokenizer."""
    from paranmt_hf import ParaNMTModel

    config = encoder.config.to_dict()
    config["lstm_peepholes"] = False
    for key in ("hidden_size", "auto_map", "architectures", "transformers_version", "model_type"):
        config.pop(key, None)
    return ParaNMTEncoder(ParaNMTModel(type(encoder.config)(**config)).eval(), encoder.tokenizer)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pickle", default=None, help="a real bilstmavg-4096-40.pickle (default: a synthetic one)")
    p.add_argument("--sentences", type=int, default=1000, help="raw STS sentences per batch size")
    p.add_argument("--batch-sizes", default="1,16,64,256", help="comma-separated")
    p.add_argument("--vocab-size", type=int, default=50_000, help="synthetic pickle: word vocabulary")
    p.add_argument("--no-baseline", action="store_true", help="skip the torch.nn.LSTM baseline")
    p.add_argument("--json", default=str(HERE / "conversion.json"), help="where to record the run")
    args = p.parse_args()

    from paranmt_hf.model.convert.paranmt50m import convert_paranmt50m
    from paranmt_hf.utils.provenance import provenance, update_record

    torch.set_num_threads(1)
    record_start = provenance()  # at the start: the load average the run began under
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.pickle) if args.pickle else Path(tmp) / "bilstmavg-4096-synthetic.pickle"
        if not args.pickle:
            released_format_pickle(path, args.vocab_size, dim=300, units=2048)
        started = time.perf_counter()
        encoder, _ = convert_paranmt50m(path, model="bilstmavg")
        convert_seconds = time.perf_counter() - started
    assert encoder.embedding_dim == 4096, encoder.embedding_dim
    baseline = None if args.no_baseline else torch_lstm_baseline(encoder)
    from paranmt_hf.utils.paths import data_dir

    every = sts_sentences(data_dir())
    sentences = [every[i] for i in np.random.default_rng(1).permutation(len(every))[: args.sentences]]
    tokens = [len(ids) for ids in encoder.token_ids(sentences)]
    runs = []
    for batch_size in (int(b) for b in args.batch_sizes.split(",")):
        texts = sentences[: min(len(sentences), 100)] if batch_size == 1 else sentences  # batch 1 is slow
        row = {"batch_size": batch_size, "sentences": len(texts)}
        seconds, cpu = time_encode(encoder, texts, batch_size)
        row.update(seconds=round(seconds, 2), sentences_per_second=round(len(texts) / seconds, 1),
                   cpu_seconds=round(cpu, 2), sentences_per_cpu_second=round(len(texts) / cpu, 1))
        if baseline is not None:
            base, base_cpu = time_encode(baseline, texts, batch_size)
            row.update(torch_lstm_seconds=round(base, 2), torch_lstm_sentences_per_second=round(len(texts) / base, 1),
                       torch_lstm_sentences_per_cpu_second=round(len(texts) / base_cpu, 1),
                       peephole_vs_torch_lstm_cpu_time_ratio=round(cpu / base_cpu, 3))
        row["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        runs.append(row)
        print(row, flush=True)
    record = {
        "what": "converted ParaNMT-50M BiLSTM-Avg, 4096-d (2 x 2048 peephole LSTMs over 300-d words), encode() of "
        "raw STS sentences on one CPU core (torch.set_num_threads(1)); baseline: same model with torch.nn.LSTM. "
        "sentences_per_second counts wall-clock time, sentences_per_cpu_second the process's CPU time (closer to "
        "an idle core's throughput when the machine is busy)",
        "provenance": record_start,
        "pickle": args.pickle or f"synthetic, released format ({args.vocab_size} words x 300, float32)",
        "convert_seconds": round(convert_seconds, 1),
        "mean_tokens_per_sentence": round(float(np.mean(tokens)), 2),
        "runs": runs,
        "load_average_before": [round(x, 2) for x in load_before],
    }
    update_record(args.json, "bilstm4096", record)
    print(f"recorded under bilstm4096 in {args.json}")


if __name__ == "__main__":
    main()
