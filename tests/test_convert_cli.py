"""``paranmt-hf convert {pras,paranmt50m}`` end to end on tiny synthetic checkpoints."""

from __future__ import annotations

import argparse
import json
import os
import pickle

import numpy as np
import pytest
import torch

from paranmt_hf.cli.main import main
from paranmt_hf.model.encoder import ParaNMTEncoder

CORPUS = [
    "a man is playing a guitar .", "a woman is slicing an onion .", "two dogs run in the park .",
    "the cat sleeps on the sofa .", "children are playing football outside .", "a man rides a horse .",
] * 20


def test_convert_paranmt50m_cli(tmp_path, capsys):
    words = sorted({w for s in CORPUS for w in s.split()})
    vocab = {w: i for i, w in enumerate(words)}
    vocab["UUUNKKK"] = len(vocab)
    we = np.random.default_rng(0).normal(size=(len(vocab), 6))
    (tmp_path / "m.pickle").write_bytes(pickle.dumps([we, vocab], protocol=2))
    assert main(["convert", "paranmt50m", str(tmp_path / "m.pickle"), "--output", str(tmp_path / "out"),
                 "--no-sentence-transformers"]) == 0
    assert "wrote" in capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "conversion_report.json").read_text())
    assert report["kind"] == "word" and report["checkpoint_rows"] == len(vocab)
    enc = ParaNMTEncoder.from_pretrained(tmp_path / "out")
    np.testing.assert_allclose(enc.encode(["a dog"])[0], we[[vocab["a"], vocab["UUUNKKK"]]].mean(0), atol=1e-6)


def test_convert_paranmt50m_bilstm_cli_and_overwrite(tmp_path, capsys):
    """The released 4096-d model's command (--model bilstmavg, -axis 2 by default), scaled down; outputs are atomic."""
    import paranmt50m_original as orig

    rng = np.random.default_rng(0)
    words = sorted({w for s in CORPUS for w in s.split()})
    vocab = orig.make_vocab(words)
    layers = [orig.lstm_arrays(rng, 6, 5) for _ in range(2)]
    we = rng.normal(size=(len(vocab), 6)).astype(np.float32)
    orig.save_params(tmp_path / "bilstmavg.pickle", [we, *layers[0], *layers[1]], vocab)
    out = tmp_path / "out"
    args = ["convert", "paranmt50m", str(tmp_path / "bilstmavg.pickle"), "--model", "bilstmavg", "--output", str(out)]
    assert main(args) == 0
    assert "-axis 2" in capsys.readouterr().out
    enc = ParaNMTEncoder.from_pretrained(out)
    texts = ["A man rides a horse!", "two dogs run in the park ."]
    want = orig.embed_single(texts, "bilstmavg", we.astype(np.float64), orig.as_loaded(vocab),
                             [orig.named(layer) for layer in layers])
    np.testing.assert_allclose(enc.encode(texts), want, atol=1e-5)
    assert json.loads((out / "conversion_report.json").read_text())["kind"] == "bilstm"
    with pytest.raises(SystemExit, match="convert paranmt50m: .*--overwrite"):  # one line, no traceback
        main(args)
    assert main([*args[:-2], "--axis", "1", "--output", str(out), "--overwrite"]) == 0
    assert ParaNMTEncoder.from_pretrained(out).embedding_dim == 5
    with pytest.raises(SystemExit, match="is the input"):
        main([*args[:-2], "--output", str(tmp_path / "bilstmavg.pickle"), "--overwrite"])
    assert (tmp_path / "bilstmavg.pickle").stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bilstmavg.pickle", "out"]  # no temporary left behind


def test_convert_pras_cli(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    (tmp_path / "train.txt").write_text("\n".join(CORPUS), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(tmp_path / "train.txt"), model_prefix=str(tmp_path / "sp"),
                                   vocab_size=40, hard_vocab_limit=False, num_threads=1, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    pieces = sorted({p for s in CORPUS for p in sp.EncodeAsPieces(s)})
    vocab = {p: i for i, p in enumerate(pieces)}
    vocab["UUUNKKK"] = len(vocab)
    args = argparse.Namespace(model="avg", dim=4, lower_case=1, tokenize=0, zero_unk=1, pool="mean", ngrams=0)
    emb = torch.nn.Embedding(len(vocab), 4)
    torch.save({"state_dict": {"embedding.weight": emb.weight.detach()}, "vocab": vocab, "vocab_fr": None,
                "args": args, "optimizer": torch.optim.Adam(emb.parameters()).state_dict(), "epoch": 1},
               tmp_path / "model.pt")
    out = tmp_path / "out"
    assert main(["convert", "pras", str(tmp_path / "model.pt"), "--sp-model", str(tmp_path / "sp.model"),
                 "--output", str(out), "--no-sentence-transformers"]) == 0
    enc = ParaNMTEncoder.from_pretrained(out)
    component = enc.model.components[0]
    assert component.unknown_ids == sorted({1, *enc.config.resolved_components()[0]["unknown_token_ids"]})
    ids = [vocab[p] for p in sp.EncodeAsPieces("a man rides a horse .") if p in vocab]
    np.testing.assert_allclose(enc.encode("A man rides a horse ."), emb.weight[ids].mean(0).detach(), atol=1e-6)


def _refusal(capsys, args: list[str]) -> str:
    """The one line a refused conversion prints (status 1, no traceback)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as err:
        main(args)
    lines = capsys.readouterr().err.strip().splitlines()
    assert err.value.code == 1 and len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("content", "said"), [
    (b"", "an empty file"),
    (b"hello world\n", "is not a readable pickle"),
    (pickle.dumps([np.zeros(3), {"a": 0}], protocol=2)[:20], "truncated"),
    (pickle.dumps({"a": 1}, protocol=2), "not a ParaNMT-50M model pickle: it holds a dict"),
])
def test_convert_paranmt50m_of_a_file_that_is_no_model_pickle_is_one_sentence(tmp_path, capsys, content, said):
    """Text, an empty or cut file, a pickle of something else: the file named, never called a pickle of code."""
    src = tmp_path / "m.pickle"
    src.write_bytes(content)
    line = _refusal(capsys, ["convert", "paranmt50m", str(src), "--output", str(tmp_path / "out")])
    assert line.startswith("paranmt-hf convert paranmt50m: ") and str(src) in line and said in line, line
    assert "code" not in line and "nothing ran" not in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("content", "said"), [
    (b"", "an empty file"),
    (b"hello world\n", "not a torch file"),
    (b"\x80\x02K\x01", "is not a readable torch checkpoint"),  # a pickle cut short
])
def test_convert_pras_of_a_file_that_is_no_checkpoint_is_one_sentence(tmp_path, capsys, content, said):
    src = tmp_path / "model.pt"
    src.write_bytes(content)
    (tmp_path / "sp.model").write_bytes(b"hello world\n")
    line = _refusal(capsys, ["convert", "pras", str(src), "--sp-model", str(tmp_path / "sp.model"),
                             "--output", str(tmp_path / "out")])
    assert line.startswith("paranmt-hf convert pras: ") and str(src) in line and said in line, line
    assert "nothing ran" not in line and "nothing was executed" not in line, line
    torch.save({"w": torch.zeros(2)}, src)
    line = _refusal(capsys, ["convert", "pras", str(src), "--sp-model", str(tmp_path / "sp.model"),
                             "--output", str(tmp_path / "out")])
    assert f"{src} is not a PRAS checkpoint: missing" in line, line


class _Code:
    def __init__(self, target) -> None:
        self.target = str(target)

    def __reduce__(self):
        return (os.system, (f"echo ran > {self.target}",))


@pytest.mark.parametrize("source", ["paranmt50m", "pras"])
def test_convert_still_refuses_pickled_code_without_running_it(tmp_path, capsys, source):
    target = tmp_path / "ran"
    src = tmp_path / "evil.bin"
    src.write_bytes(pickle.dumps([1.0, _Code(target), {"UUUNKKK": 0}], protocol=2))
    extra = ["--sp-model", str(src)] if source == "pras" else []
    line = _refusal(capsys, ["convert", source, str(src), *extra, "--output", str(tmp_path / "out")])
    assert "refusing to load" in line and "system" in line and "nothing was executed" in line, line
    assert not target.exists()


def _pras_checkpoint(path, **settings) -> None:
    """A tiny PRAS checkpoint (word averaging over a 3-piece vocabulary)."""
    args = argparse.Namespace(**{"model": "avg", "dim": 4, "lower_case": 1, "tokenize": 0, "zero_unk": 1,
                                 "pool": "mean", "ngrams": 0, **settings})
    vocab = {"▁a": 0, "▁b": 1, "UUUNKKK": 2}
    torch.save({"state_dict": {"embedding.weight": torch.zeros(3, 4)}, "vocab": vocab, "vocab_fr": None,
                "args": args, "epoch": 1}, path)


@pytest.mark.parametrize(("case", "said"), [
    ("no unknown-word row", "vocabulary has no 'UUUNKKK' entry"),
    ("another model type", "holds 0 arrays after its embeddings, a bilstmavg model"),
    ("moses", "was trained with --tokenize 1"),
    ("sp model of text", "is not a sentencepiece model"),
])
def test_a_checkpoint_that_does_not_fit_the_conversion_is_one_sentence(tmp_path, capsys, case, said):
    """Its vocabulary, its layout against --model, its settings, its sentencepiece file: named, no traceback."""
    if case in ("no unknown-word row", "another model type"):
        src = tmp_path / "m.pickle"
        vocab = {"a": 0, "b": 1} if case == "no unknown-word row" else {"a": 0, "b": 1, "UUUNKKK": 2}
        src.write_bytes(pickle.dumps([np.zeros((len(vocab), 2)), vocab], protocol=2))
        args = ["convert", "paranmt50m", str(src), *(["--model", "bilstmavg"] if case == "another model type" else [])]
    else:
        pytest.importorskip("sentencepiece")
        src = tmp_path / "model.pt"
        _pras_checkpoint(src, tokenize=int(case == "moses"))
        (tmp_path / "sp.model").write_text("not a sentencepiece model\n")
        args = ["convert", "pras", str(src), "--sp-model", str(tmp_path / "sp.model")]
    line = _refusal(capsys, [*args, "--output", str(tmp_path / "out")])
    assert str(src) in line or str(tmp_path / "sp.model") in line, line
    assert said in line and "ignore_moses" not in line, line
    assert not (tmp_path / "out").exists()
