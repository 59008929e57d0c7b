"""A small encoder-decoder built from a config, with a tokenizer trained on the corpus (no download).

ParaNMT-50M §6 trains "a bidirectional LSTM encoder and a two-layer LSTM decoder with soft attention" on the corpus;
``transformers`` has no such model, so a from-scratch generator is a small Marian transformer (the architecture of
the opus-mt translation models: sinusoidal positions, shared embeddings, ``decoder_start_token_id = pad``), which
every ``transformers`` seq2seq tool loads (``AutoModelForSeq2SeqLM``, ``generate``, CTranslate2's converter). The
tokenizer is a SentencePiece-style unigram model trained with ``tokenizers`` (NFKC, ``▁`` word boundaries, ``</s>``
appended), saved as ``tokenizer.json`` (``AutoTokenizer`` loads it). The same builder makes the small translation
model of ``paranmt-hf train-translator`` (trained on both languages' text).

opus-mt's conventions, which CTranslate2's Marian converter relies on, are kept: ``</s>`` is id 0, ``<unk>`` 1 and
``<pad>`` the last id; the ``<pad>`` embedding row is zero and stays zero in training (:func:`zero_pad_row` after
every step: the decoder starts from that row, and CTranslate2 starts a Marian decoder from a zero vector), and
``generate`` never emits ``<pad>`` (``bad_words_ids``, as opus-mt's generation configs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ..utils.imports import require

PAD, EOS, UNK = "<pad>", "</s>", "<unk>"


@dataclass(frozen=True)
class Seq2SeqSize:
    """The shape of a from-scratch Marian model."""

    d_model: int
    layers: int
    heads: int
    ffn_dim: int
    dropout: float = 0.1

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly fields."""
        return asdict(self)


SIZES: dict[str, Seq2SeqSize] = {
    "tiny": Seq2SeqSize(64, 1, 2, 128, 0.0),  # tests
    "small": Seq2SeqSize(256, 3, 4, 1024),  # a CPU-trainable model (~8M parameters with an 8K vocabulary)
    "base": Seq2SeqSize(512, 6, 8, 2048),  # opus-mt's shape
}
"""Named sizes of :func:`build_seq2seq_model`."""


def train_seq2seq_tokenizer(texts: Iterable[str], vocab_size: int = 8000, max_length: int = 128) -> Any:
    """A unigram subword tokenizer trained on ``texts`` (all sides, all languages), as a ``transformers`` tokenizer.

    Ids: ``</s>`` 0, ``<unk>`` 1, the pieces, ``<pad>`` last (opus-mt's layout); every encoding ends with ``</s>``.
    """
    tokenizers = require("tokenizers", "generator")
    transformers = require("transformers", "generator")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = tokenizers.Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size - 1, special_tokens=[EOS, UNK], unk_token=UNK,
                                      show_progress=False)
    tokenizer.train_from_iterator(texts, trainer=trainer)
    tokenizer.add_special_tokens([PAD])  # the last id
    eos = tokenizer.token_to_id(EOS)
    tokenizer.post_processor = processors.TemplateProcessing(single=f"$A {EOS}", pair=f"$A {EOS} $B {EOS}",
                                                             special_tokens=[(EOS, eos)])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token=PAD, eos_token=EOS,
                                                unk_token=UNK, model_max_length=max_length)


def build_seq2seq_model(tokenizer: Any, size: str | Seq2SeqSize = "small", max_length: int = 128,
                        seed: int = 0) -> Any:
    """A freshly initialised ``MarianMTModel`` for ``tokenizer``'s vocabulary (seeded)."""
    torch = require("torch", "generator")
    transformers = require("transformers", "generator")
    shape = SIZES[size] if isinstance(size, str) else size
    if isinstance(size, str) and size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {tuple(SIZES)}")
    config = transformers.MarianConfig(
        vocab_size=len(tokenizer), d_model=shape.d_model, encoder_layers=shape.layers, decoder_layers=shape.layers,
        encoder_attention_heads=shape.heads, decoder_attention_heads=shape.heads, encoder_ffn_dim=shape.ffn_dim,
        decoder_ffn_dim=shape.ffn_dim, dropout=shape.dropout, attention_dropout=shape.dropout,
        activation_dropout=shape.dropout, max_position_embeddings=max(max_length, 8) + 2,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id, forced_eos_token_id=tokenizer.eos_token_id,
        share_encoder_decoder_embeddings=True, scale_embedding=True, tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(config)
    zero_pad_row(model)
    model.generation_config.num_beams = 1
    model.generation_config.max_new_tokens = max_length  # transformers' default (20 tokens in all) cuts sentences
    model.generation_config.bad_words_ids = [[tokenizer.pad_token_id]]
    return model


def zero_pad_row(model: Any) -> None:
    """Set the ``<pad>`` row of a Marian model's shared embeddings (tied to the output projection) to zero."""
    torch = require("torch", "generator")
    pad = model.config.pad_token_id
    with torch.no_grad():
        model.get_input_embeddings().weight[pad].zero_()
