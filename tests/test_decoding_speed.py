"""What keeps the transformers engine at ``generate``'s speed: sorted batches under a budget sized from the GPU's
memory (device faked), the costs of a batch copied to the host once (no synchronisation per candidate), and a half
precision model fed and scored in its own dtype."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sentencepiece")

from _synthetic_translation import OPUS_MT_SIZE, build_translation_model, model_sentences  # noqa: E402
from transformers import MarianConfig  # noqa: E402

from paranmt_hf.corpus.translation.transformers_engine import (  # noqa: E402
    CPU_BATCH_TOKENS,
    BatchBudget,
    DecodingOptions,
    TransformersOptions,
    TransformersTranslator,
    device_batch_budget,
    device_batch_tokens,
    length_sorted_batches,
)

SENTENCES = model_sentences(60, seed=3)
GIB = 2**30


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_translation_model(tmp_path_factory.mktemp("speed") / "marian", SENTENCES, seed=2)


def test_batches_are_sorted_by_length_and_kept_under_the_budget() -> None:
    lengths = [5, 30, 7, 29, 6, 31, 8, 28]
    batches = length_sorted_batches(lengths, budget=4 * 31 * 2, width=2)
    assert [[lengths[i] for i in b] for b in batches] == [[31, 30, 29, 28], [8, 7, 6, 5]]
    assert length_sorted_batches(lengths, budget=4 * 31 * 2, width=2, max_items=3)[0] == [5, 1, 3]
    # a candidate's memory that does not grow with its source (row_tokens) counts for every sentence
    with_rows = length_sorted_batches(lengths, budget=4 * 31 * 2, width=2, row_tokens=31)
    assert len(with_rows) == 4 and [len(b) for b in with_rows] == [2, 2, 3, 1]
    for batch in with_rows:
        assert len(batch) * (max(lengths[i] for i in batch) + 31) * 2 <= 4 * 31 * 2


def test_the_gpu_batch_budget_is_derived_from_its_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    opus = MarianConfig(d_model=512, encoder_layers=6, decoder_layers=6, vocab_size=OPUS_MT_SIZE["vocab_size"])
    assert device_batch_budget("cpu", opus) == BatchBudget(CPU_BATCH_TOKENS, 0)
    small, big = (device_batch_budget("cuda:0", opus, total_memory=m * GIB) for m in (16, 141))
    assert big.tokens == pytest.approx(small.tokens * 141 / 16, rel=1e-3)
    assert big.row_tokens == small.row_tokens > 0  # logits and self-attention cache of a candidate
    # a source token: the cross-attention keys and values of 6 decoder layers and the encoder state, 512 float32 each
    assert big.tokens == int((141 * GIB) * 0.6 / 2 // ((2 * 6 + 1) * 512 * 4))
    # the H200 holds thousands of opus-mt sentences at beam 4 in float32, a 16 GiB card a few hundred
    per_sentence = 4 * (30 + big.row_tokens)
    assert big.tokens // per_sentence > 2000 and 100 < small.tokens // per_sentence < 500
    half = device_batch_budget("cuda", opus, total_memory=141 * GIB, dtype_bytes=2)
    assert half.tokens == pytest.approx(2 * big.tokens, rel=1e-3)  # half the bytes per token: twice the tokens
    weights = device_batch_budget("cuda", opus, total_memory=141 * GIB, weight_bytes=41 * GIB)
    assert weights.tokens == pytest.approx(big.tokens * 100 / 141, rel=1e-3)
    longer = device_batch_budget("cuda", opus, total_memory=141 * GIB, max_new_tokens=256)
    assert longer.row_tokens > big.row_tokens

    class Properties:
        total_memory = 80 * GIB

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Properties())
    assert device_batch_budget("cuda:1", opus) == device_batch_budget("cuda", opus, total_memory=80 * GIB)
    assert device_batch_tokens("cuda", opus) > CPU_BATCH_TOKENS == device_batch_tokens("cpu", opus)


def test_a_translator_on_a_gpu_sizes_its_batches_from_that_gpu(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    translator = TransformersTranslator(model, DecodingOptions(num_beams=2, max_new_tokens=8),
                                        TransformersOptions(device="cpu"))
    assert translator.batch_budget == BatchBudget(CPU_BATCH_TOKENS)
    translator.device = torch.device("cuda:0")  # the device faked: only the budget reads it

    class Properties:
        total_memory = 24 * GIB

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Properties())
    weights = sum(p.numel() * 4 for p in translator.model.parameters())
    assert translator.batch_budget == device_batch_budget("cuda:0", translator.config, dtype_bytes=4,
                                                          max_new_tokens=8, weight_bytes=weights)
    given = TransformersTranslator(model, DecodingOptions(batch_tokens=999), TransformersOptions(device="cpu"))
    given.device = torch.device("cuda:0")
    assert given.batch_budget == BatchBudget(999)


def test_the_costs_of_a_batch_reach_the_host_at_once(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``float(tensor)`` / ``.item()`` per candidate: each is a device synchronisation on a GPU."""
    translator = TransformersTranslator(model, DecodingOptions(num_beams=3, num_return=2, max_new_tokens=8),
                                        TransformersOptions(device="cpu"))
    expected = translator.translate(SENTENCES[:12]).hypotheses

    def refuse(*args: Any) -> Any:
        raise AssertionError("a scalar copied to the host inside a batch")

    monkeypatch.setattr(torch.Tensor, "__float__", refuse)
    monkeypatch.setattr(torch.Tensor, "item", refuse)
    assert translator.translate(SENTENCES[:12]).hypotheses == expected


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_half_precision_model_runs_and_is_scored_in_its_dtype(model: Path, dtype: str) -> None:
    translator = TransformersTranslator(model, DecodingOptions(num_beams=2, max_new_tokens=6),
                                        TransformersOptions(device="cpu", dtype=dtype))
    want = getattr(torch, dtype)
    assert translator.dtype == want
    assert {p.dtype for p in translator.model.parameters()} == {want}  # loaded in it, never cast per batch
    seen: list[torch.dtype] = []

    def record(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        for value in (*args, *kwargs.values()):
            hidden = getattr(value, "last_hidden_state", value)
            if isinstance(hidden, torch.Tensor) and hidden.is_floating_point():
                seen.append(hidden.dtype)

    for layer in (translator.model.get_encoder(), translator.model.get_decoder()):
        layer.register_forward_pre_hook(record, with_kwargs=True)
    hypotheses = translator.translate(SENTENCES[:4]).hypotheses
    assert seen and set(seen) == {want}  # no float32 tensor handed to a half model
    assert all(c.cost == c.cost and c.cost > 0 for h in hypotheses for c in h)  # finite, from float32 log-softmax


@pytest.mark.parametrize("script", ["speed.py", "gpu_check.py"])
def test_the_throughput_benchmark_scripts_explain_themselves(script: str) -> None:
    import subprocess
    import sys

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "backtranslation" / script
    done = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout and "generate" in done.stdout
