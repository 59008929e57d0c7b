"""Conversion of "Paraphrastic Representations at Scale" checkpoints, golden-tested against the original inference.

The synthetic checkpoint has exactly the structure PRAS ``models.ParaModel.save_params`` writes: ``torch.save`` of
{'state_dict', 'vocab', 'vocab_fr', 'args': argparse.Namespace, 'optimizer': optimizer.state_dict(), 'epoch'}; its
vocabulary is built like PRAS preprocessing (pieces of the sentencepiece-encoded training text, by frequency, then
``UUUNKKK``), so it also holds unknown-character runs and misses rare pieces.
"""

from __future__ import annotations

import argparse
import collections
import random

import numpy as np
import pytest
import torch

spm = pytest.importorskip("sentencepiece")

from paranmt_hf.model.convert.pras import UNK_STRING, convert_pras, load_pras_checkpoint  # noqa: E402
from paranmt_hf.model.convert.sentencepiece import (  # noqa: E402
    build_sentencepiece_tokenizer,
    read_sentencepiece_model,
    surface,
)
from paranmt_hf.model.encoder import ParaNMTEncoder  # noqa: E402

pytestmark = pytest.mark.data  # every test here reads the shared real data

EDGE_CASES = [
    "",
    "   ",
    "\t\n",
    "😀😀 ☃☃☃",  # only unknown characters: every piece dropped -> UUUNKKK
    "Café naïve résumé — déjà vu",
    "数字 123 中文字 ok",
    "ﬁne ① ⅻ ㎏ Ｆｕｌｌ",
    "[PAD] [UNK] <unk> <s> UUUNKKK",
    "  many    spaces\tand\ttabs  ",
    "İstanbul ΟΔΟΣ straße",
    "a😀b 😀😀 x",
]


def sts_sentences(data_dir) -> list[str]:
    files = sorted((data_dir / "eval" / "sts").glob("STS1[2-6]-en-test/STS.input.*.txt"))
    assert files, f"no STS input files under {data_dir / 'eval' / 'sts'}"
    out = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            out.extend(line.split("\t")[:2])
    return out


@pytest.fixture(scope="module")
def sentences(data_dir) -> list[str]:
    sents = sts_sentences(data_dir)
    random.Random(0).shuffle(sents)
    return sents


@pytest.fixture(scope="module")
def sp_model(tmp_path_factory, sentences) -> str:
    """A small sentencepiece model trained like PRAS preprocess_data.py (unigram, coverage < 1, soft limit)."""
    d = tmp_path_factory.mktemp("sp")
    (d / "train.txt").write_text("\n".join(s.lower() for s in sentences[:3000]), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(d / "train.txt"), model_prefix=str(d / "paranmt"), vocab_size=800, character_coverage=0.99,
        hard_vocab_limit=False, model_type="unigram", num_threads=1, minloglevel=2,
    )
    return str(d / "paranmt.model")


def pras_vocab(sentences: list[str], sp) -> dict[str, int]:
    """Checkpoint vocabulary as PRAS builds it: pieces of the encoded training data (rare ones left out)."""
    counts = collections.Counter(p for s in sentences for p in sp.EncodeAsPieces(s.lower()))
    vocab = {p: i for i, (p, c) in enumerate(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) if c > 1}
    vocab = {p: i for i, p in enumerate(vocab)}
    for junk in ("never-produced", "▁Uppercase", "x y"):  # rows no piece can reach
        vocab[junk] = len(vocab)
    vocab[UNK_STRING] = len(vocab)
    return vocab


def write_checkpoint(path, kind: str, sp_model: str, vocab: dict[str, int], zero_unk: int = 1,
                     pool: str = "mean", legacy: bool = False, dim: int = 16) -> dict:
    """torch.save exactly what PRAS ParaModel.save_params saves."""
    torch.manual_seed(0)
    args = argparse.Namespace(
        data_file="paranmt.h5", vocab_file="paranmt.vocab", gpu=0, dim=dim, model=kind, grad_clip=5.0, epochs=25,
        lr=0.001, dropout=0.0, batchsize=128, megabatch_size=100, megabatch_anneal=150, pool=pool,
        zero_unk=zero_unk, load_file=None, save_every_epoch=1, save_final=0, outfile="model.para.out",
        hidden_dim=6, delta=0.4, ngrams=0, share_encoder=1, share_vocab=1, scramble_rate=0, sp_model=sp_model,
        lower_case=1, tokenize=0, debug=0,
    )
    module = torch.nn.Module()
    module.embedding = torch.nn.Embedding(len(vocab), dim)
    if kind == "lstm":
        module.lstm = torch.nn.LSTM(dim, args.hidden_dim, num_layers=1, bidirectional=True, batch_first=True)
    optimizer = torch.optim.Adam(module.parameters(), lr=args.lr)
    module.embedding(torch.tensor([[1, 2]])).sum().backward()
    optimizer.step()
    ckpt = {"state_dict": module.state_dict(), "vocab": vocab, "vocab_fr": None, "args": args,
            "optimizer": optimizer.state_dict(), "epoch": 3}
    torch.save(ckpt, path, _use_new_zipfile_serialization=not legacy)
    return {"module": module, "args": args, "vocab": vocab}


def reference_embed(sentences: list[str], ref: dict, sp) -> np.ndarray:
    """The ORIGINAL inference: PRAS embed_sentences.batcher + utils.Example + models.{Averaging,LSTM}.encode."""
    args, vocab, module = ref["args"], ref["vocab"], ref["module"]
    seqs = []
    for p in sentences:
        if args.lower_case:
            p = p.lower()
        p = " ".join(sp.EncodeAsPieces(p))
        sent = p.strip().lower() if args.lower_case else p.strip()  # Example(p, lower_case)
        ids = []
        for w in sent.split():  # populate_embeddings -> lookup(words, w, zero_unk)
            if w in vocab:
                ids.append(vocab[w])
            elif not args.zero_unk:
                ids.append(vocab[UNK_STRING])
        seqs.append(ids or [vocab[UNK_STRING]])
    out = []
    with torch.no_grad():
        for ids in seqs:
            x = module.embedding(torch.tensor([ids]))
            if args.model == "lstm":
                x = module.lstm(x)[0]  # one sentence, no padding: pack/unpack is the identity
            out.append(x[0].mean(0) if args.pool == "mean" else x[0].max(0).values)
    return torch.stack(out).numpy()


def test_tokenizer_segments_like_sentencepiece(sp_model, sentences):
    """EncodeAsPieces on lower-cased text vs the converted tokenizer on raw text, on every STS sentence."""
    sp = spm.SentencePieceProcessor(model_file=sp_model)
    tok = build_sentencepiece_tokenizer(read_sentencepiece_model(sp_model), lowercase=True)
    texts = sentences[:25000] + EDGE_CASES
    encoded = tok.encode_batch(texts, add_special_tokens=False)
    order_diff = multiset_diff = 0
    for text, enc in zip(texts, encoded, strict=True):
        want, got = sp.EncodeAsPieces(text.lower()), [surface(t) for t in enc.tokens]
        order_diff += want != got
        multiset_diff += sorted(want) != sorted(got)
    # Equal-score segmentations that are permutations of each other (e.g. "000" -> 00+0 or 0+00) are broken by
    # float32 rounding in sentencepiece and float64 in tokenizers: the order may differ, the multiset never does.
    assert multiset_diff == 0
    assert order_diff <= 0.001 * len(texts), f"{order_diff} of {len(texts)} differ in piece order"


@pytest.mark.parametrize("kind,zero_unk,pool,legacy", [
    ("avg", 1, "mean", False), ("avg", 0, "mean", True), ("avg", 1, "max", False), ("lstm", 1, "mean", False),
])
def test_golden_embeddings(tmp_path, sp_model, sentences, kind, zero_unk, pool, legacy):
    sp = spm.SentencePieceProcessor(model_file=sp_model)
    vocab = pras_vocab(sentences[:3000], sp)
    ref = write_checkpoint(tmp_path / "model.pt", kind, sp_model, vocab, zero_unk, pool, legacy)
    encoder, report = convert_pras(tmp_path / "model.pt", sp_model)
    assert report.unreachable_rows == 3 and report.pieces_without_row > 0 and report.unknown_runs_mapped > 0
    texts = sentences[3000:4500] + EDGE_CASES if kind == "avg" else sentences[3000:3150] + EDGE_CASES
    want = reference_embed(texts, ref, sp)
    got = encoder.encode(texts, batch_size=256)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
    encoder.save_pretrained(tmp_path / "out", sentence_transformers=False)
    reloaded = ParaNMTEncoder.from_pretrained(tmp_path / "out")
    assert_reload_keeps_unknown_mask(encoder, reloaded)
    np.testing.assert_allclose(reloaded.encode(texts[-40:]), want[-40:], atol=1e-6, rtol=0)


def assert_reload_keeps_unknown_mask(encoder, reloaded) -> None:
    """ParaNMTModel.from_pretrained must rebuild each component's (non-persistent) unknown-token mask."""
    for before, after in zip(encoder.model.components, reloaded.model.components, strict=True):
        assert before.unknown_ids == after.unknown_ids
        ids = torch.arange(before.vocab_size)
        assert torch.equal(before.is_unknown(ids), after.is_unknown(ids))


def test_unknown_runs_get_their_own_rows(tmp_path, sp_model, sentences):
    """An unknown-character run present in the checkpoint vocab is embedded with its own row (PRAS issue #6)."""
    sp = spm.SentencePieceProcessor(model_file=sp_model)
    vocab = pras_vocab(sentences[:3000], sp)
    runs = [p for p in ["😀😀", "☃"] if p not in vocab]
    for run in runs:
        vocab[run] = len(vocab)
    vocab[UNK_STRING] = vocab.pop(UNK_STRING)
    vocab = {p: i for i, p in enumerate(vocab)}
    ref = write_checkpoint(tmp_path / "model.pt", "avg", sp_model, vocab)
    encoder, _ = convert_pras(tmp_path / "model.pt", sp_model)
    texts = ["😀😀", "😀", "😀😀😀", "x 😀😀 y", "☃☃", "a☃b"]
    np.testing.assert_allclose(encoder.encode(texts), reference_embed(texts, ref, sp), atol=1e-6, rtol=0)
    pieces = sp.EncodeAsPieces("😀😀")
    assert "😀😀" in pieces
    rows = ref["module"].embedding.weight[[vocab[p] for p in pieces if p in vocab]].detach().numpy()
    np.testing.assert_allclose(encoder.encode("😀😀"), rows.mean(0), atol=1e-6)


def test_checkpoint_loads_safely(tmp_path, sp_model, sentences):
    sp = spm.SentencePieceProcessor(model_file=sp_model)
    write_checkpoint(tmp_path / "model.pt", "avg", sp_model, pras_vocab(sentences[:500], sp))
    ckpt = load_pras_checkpoint(tmp_path / "model.pt")
    assert isinstance(ckpt["args"], argparse.Namespace) and ckpt["epoch"] == 3
    assert set(ckpt) == {"state_dict", "vocab", "vocab_fr", "args", "optimizer", "epoch"}


def test_moses_checkpoint_is_refused(tmp_path, sp_model, sentences):
    sp = spm.SentencePieceProcessor(model_file=sp_model)
    ref = write_checkpoint(tmp_path / "model.pt", "avg", sp_model, pras_vocab(sentences[:500], sp))
    ckpt = torch.load(tmp_path / "model.pt", weights_only=False)
    ckpt["args"].tokenize = 1
    torch.save(ckpt, tmp_path / "moses.pt")
    with pytest.raises(ValueError, match="--tokenize 1"):
        convert_pras(tmp_path / "moses.pt", sp_model)
    encoder, _ = convert_pras(tmp_path / "moses.pt", sp_model, ignore_moses=True)
    assert encoder.encode("a b").shape == (ref["args"].dim,)
