"""Translation models made in code: seeded random weights and a vocabulary trained on the given sentences.

For tests, benchmarks and offline try-outs of ``paranmt-hf corpus backtranslate`` (the Hub is not needed). Three
layouts, as the real models have them:

- ``"marian"``: ``MarianMTModel`` + ``MarianTokenizer`` (SentencePiece ``source.spm``/``target.spm`` and
  ``vocab.json``), the Helsinki-NLP opus-mt layout;
- ``"nllb"``: ``M2M100ForConditionalGeneration`` + ``NllbTokenizer`` (BPE, language codes such as ``ces_Latn``);
- ``"m2m100"``: ``M2M100ForConditionalGeneration`` + ``M2M100Tokenizer`` (SentencePiece, codes such as ``cs``).

Only the plumbing means anything: random weights translate nothing. :data:`OPUS_MT_SIZE` gives the size of an
opus-mt model (for speed measurements).
"""

from __future__ import annotations

import io
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paranmt_hf.utils.imports import require

OPUS_MT_SIZE = {"d_model": 512, "layers": 6, "heads": 8, "ffn": 2048, "vocab_size": 58101}
"""Helsinki-NLP/opus-mt-*-en: 6+6 layers, 512 dimensions, 8 heads, 2048 feed-forward, 58,101 tokens (~74M weights)."""

TINY_SIZE = {"d_model": 32, "layers": 2, "heads": 4, "ffn": 64, "vocab_size": None}
KINDS = ("marian", "nllb", "m2m100")
NLLB_CODES = ("ces_Latn", "deu_Latn", "eng_Latn", "fra_Latn", "spa_Latn")


def _spm_model(sentences: Sequence[str], vocab_size: int, seed: int) -> bytes:
    spm = require("sentencepiece", "sp")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, vocab_size=vocab_size, model_type="unigram",
        bos_id=-1, eos_id=-1, pad_id=-1, unk_id=0, hard_vocab_limit=False,
        minloglevel=2, num_threads=1)
    return model.getvalue()


def _spm_pieces(model: bytes) -> list[str]:
    spm = require("sentencepiece", "sp")
    processor = spm.SentencePieceProcessor(model_proto=model)
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]


def _pad_vocab(vocab: dict[str, int], size: int | None, before: Sequence[str] = ()) -> dict[str, int]:
    """Fill ``vocab`` with unused pieces up to ``size`` entries (then the ``before`` tokens keep the last ids)."""
    if size is not None:
        filler = 0
        while len(vocab) + len(before) < size:
            vocab.setdefault(f"\u2581unused{filler}", len(vocab))
            filler += 1
    for token in before:
        vocab.setdefault(token, len(vocab))
    return vocab


def build_translation_model(
    out_dir: str | os.PathLike[str],
    sentences: Sequence[str],
    *,
    kind: str = "marian",
    d_model: int = 32,
    layers: int = 2,
    heads: int = 4,
    ffn: int = 64,
    vocab_size: int | None = None,
    spm_pieces: int = 200,
    max_length: int = 32,
    seed: int = 0,
    init_std: float = 0.2,
    eos_scale: float = 4.0,
) -> Path:
    """Write a translation model with random weights (seeded) and a vocabulary learned from ``sentences``.

    Args:
        out_dir: the folder to write (``save_pretrained`` layout of the model and its tokenizer).
        sentences: text the vocabulary is trained on (both sides share it).
        kind: ``"marian"``, ``"nllb"`` or ``"m2m100"``.
        d_model: hidden size (:data:`OPUS_MT_SIZE` gives an opus-mt-sized model).
        layers: encoder and decoder layers.
        heads: attention heads.
        ffn: feed-forward size.
        vocab_size: pad the vocabulary to this many tokens (None: what the sentences give).
        spm_pieces: pieces the SentencePiece / BPE vocabulary is asked for.
        max_length: the generation config's ``max_length`` (random models rarely stop by themselves).
        seed: seeds the vocabulary training and the weights.
        init_std: standard deviation of the random weights (larger: sharper, less tied output distributions).
        eos_scale: the end-of-sentence token's output embedding is scaled by this, so that random models end
            their outputs at varied lengths (1: untouched, the outputs then mostly run to ``max_length``).

    Returns:
        the folder.
    """
    torch = require("torch", "translate")
    transformers = require("transformers", "translate")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {KINDS}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sentences = list(sentences)
    random.Random(seed).shuffle(sentences)
    size = {"d_model": d_model, "encoder_layers": layers, "decoder_layers": layers, "encoder_attention_heads": heads,
            "decoder_attention_heads": heads, "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn,
            "max_position_embeddings": 512, "init_std": init_std}
    if kind == "marian":
        spm = _spm_model(sentences, spm_pieces, seed)
        for name in ("source.spm", "target.spm"):
            (out / name).write_bytes(spm)
        vocab = {"</s>": 0, "<unk>": 1}
        for piece in _spm_pieces(spm):
            if piece != "<unk>":
                vocab.setdefault(piece, len(vocab))
        vocab = _pad_vocab(vocab, vocab_size, before=("<pad>",))  # opus-mt: <pad> has the last id
        (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        tokenizer = transformers.MarianTokenizer(source_spm=str(out / "source.spm"),
                                                 target_spm=str(out / "target.spm"), vocab=str(out / "vocab.json"))
        pad = vocab["<pad>"]
        config = transformers.MarianConfig(vocab_size=len(vocab), pad_token_id=pad, eos_token_id=0,
                                           decoder_start_token_id=pad, forced_eos_token_id=None,
                                           share_encoder_decoder_embeddings=True, **size)
        model_class = transformers.MarianMTModel
    elif kind == "m2m100":
        spm = _spm_model(sentences, spm_pieces, seed)
        (out / "sentencepiece.bpe.model").write_bytes(spm)
        vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
        for piece in _spm_pieces(spm):
            vocab.setdefault(piece, len(vocab))
        vocab = _pad_vocab(vocab, None if vocab_size is None else vocab_size - 108)
        (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        tokenizer = transformers.M2M100Tokenizer(vocab_file=str(out / "vocab.json"),
                                                 spm_file=str(out / "sentencepiece.bpe.model"), src_lang="en",
                                                 tgt_lang="en")
        # as facebook/m2m100_418M: the pieces, 100 language tokens, then tokenizer.num_madeup_words unused ones
        ids = [*tokenizer.get_vocab().values(), *tokenizer.lang_code_to_id.values()]
        config = transformers.M2M100Config(vocab_size=max(ids) + 1 + tokenizer.num_madeup_words, pad_token_id=1,
                                           bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                                           scale_embedding=True, **size)
        model_class = transformers.M2M100ForConditionalGeneration
    else:
        tokenizers = require("tokenizers", "translate")
        bpe = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
        bpe.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace()
        special = ["<s>", "<pad>", "</s>", "<unk>"]
        trainer = tokenizers.trainers.BpeTrainer(vocab_size=spm_pieces, special_tokens=special, show_progress=False)
        bpe.train_from_iterator(sentences, trainer)
        data = json.loads(bpe.to_str())
        vocab = _pad_vocab(dict(data["model"]["vocab"]),
                           None if vocab_size is None else vocab_size - len(NLLB_CODES) - 1)
        merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in data["model"]["merges"]]
        tokenizer = transformers.NllbTokenizer(vocab=vocab, merges=merges, src_lang="eng_Latn", tgt_lang="eng_Latn",
                                               additional_special_tokens=list(NLLB_CODES))
        config = transformers.M2M100Config(vocab_size=len(tokenizer), pad_token_id=1, bos_token_id=0,
                                           eos_token_id=2, decoder_start_token_id=2, scale_embedding=True, **size)
        model_class = transformers.M2M100ForConditionalGeneration
    torch.manual_seed(seed)
    model = model_class(config).eval()
    with torch.no_grad():
        model.get_output_embeddings().weight[config.eos_token_id] *= eos_scale
    model.generation_config.max_length = max_length
    model.generation_config.num_beams = 1
    if kind == "marian":
        model.generation_config.bad_words_ids = [[config.pad_token_id]]  # as opus-mt's generation config
    from paranmt_hf.corpus.translation.transformers_engine import quiet_loading

    with quiet_loading():
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    return out


def model_sentences(count: int = 300, seed: int = 0) -> list[str]:
    """Made-up sentences over a small vocabulary (to train a tiny vocabulary on)."""
    words = ("the a cat dog house sees runs big small red blue green quickly slowly and or not we they "
             "der die das Haus Katze sieht le la chat voit maison petit grand").split()
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=rng.randint(2, 12))) for _ in range(count)]


def describe(out_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Kind, size and vocabulary of a model written by :func:`build_translation_model`."""
    config = json.loads((Path(out_dir) / "config.json").read_text(encoding="utf-8"))
    return {k: config.get(k) for k in ("model_type", "d_model", "encoder_layers", "decoder_layers", "vocab_size")}
