"""The paraphrase generator (ParaNMT-50M §6): train-generator on pairs (tiny Marian built in code, Seq2SeqTrainer),
paraphrase (beam / sampling, n-best, files), the evaluation beside the copy baseline, and its Hub card."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from paranmt_hf.cli.main import main

pytest.importorskip("accelerate")
pytest.importorskip("datasets")
pytest.importorskip("sacrebleu")

SUBJECTS = ["a man", "the woman", "a child", "two dogs", "the old cat", "my friend", "a small bird", "the teacher"]
VERBS = [("is running", "runs"), ("is eating", "eats"), ("is sleeping", "sleeps"), ("is singing", "sings"),
         ("is reading", "reads"), ("is walking", "walks")]
PLACES = ["in the park", "at home", "near the river", "on the street"]


def pairs() -> list[tuple[str, str, float]]:
    """Paraphrase pairs with scores: 'X is running in the park .' <-> 'X runs in the park .' (score 0.9);
    some low-score pairs the default bounds drop."""
    out = []
    for s in SUBJECTS:
        for progressive, simple in VERBS:
            for p in PLACES:
                out.append((f"{s} {progressive} {p} .", f"{s} {simple} {p} .", 0.9))
    out += [(f"{s} is here .", "something else entirely .", 0.1) for s in SUBJECTS]
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: more threads only wait on each other (10x slower on a busy machine)
    folder = tmp_path_factory.mktemp("gen")
    data = folder / "pairs.tsv"
    data.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in pairs()), encoding="utf-8")
    out = folder / "model"
    assert main(["train-generator", str(data), "--output", str(out), "--size", "tiny", "--vocab-size", "80",
                 "--max-overlap", "none", "--held-out", "12", "--max-steps", "150", "--batch-size", "16",
                 "--learning-rate", "3e-3", "--warmup-steps", "20", "--num-beams", "2", "--no-progress"]) == 0
    yield out
    torch.set_num_threads(threads)


def test_train_generator_selects_holds_out_and_trains_both_directions(trained: Path) -> None:
    summary = json.loads((trained / "generator_summary.json").read_text(encoding="utf-8"))
    data = summary["data"]
    total = len(SUBJECTS) * len(VERBS) * len(PLACES)
    assert data["filter"] == {"kept": total, "score": len(SUBJECTS)}  # the 0.1-score pairs are dropped
    assert data["held_out"] == 12
    assert data["training_examples"] == 2 * data["training_pairs"] and data["both_directions"]
    held = [line.split("\t") for line in (trained / "held_out.tsv").read_text(encoding="utf-8").splitlines()]
    assert len(held) == 12
    assert data["training_pairs"] + data["left_out_sharing_a_held_out_sentence"] + 12 == total
    assert summary["steps"] == 150 and summary["base"]["from_scratch"] == "marian"
    config = json.loads((trained / "generation_config.json").read_text(encoding="utf-8"))
    assert config["max_new_tokens"] == 128  # not transformers' default of 20 tokens
    # it learnt: the held-out loss is far below a uniform guess over the vocabulary
    assert summary["eval"]["loss"] < 0.6 * math.log(summary["base"]["vocab_size"])
    for name in ("config.json", "model.safetensors", "tokenizer.json", "evaluation.json"):
        assert (trained / name).is_file(), name


def test_generation_is_model_generate_in_input_order(trained: Path) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from paranmt_hf.paraphrase_generator import DecodingOptions, ParaphraseGenerator

    generator = ParaphraseGenerator.from_pretrained(trained)
    texts = ["the teacher is singing at home .", "a man is running in the park .", "two dogs is here ."]
    got = generator.generate(texts, DecodingOptions(num_beams=3, num_return=2), batch_size=2)
    tokenizer, model = AutoTokenizer.from_pretrained(trained), AutoModelForSeq2SeqLM.from_pretrained(trained)
    for text, candidates in zip(texts, got, strict=True):
        batch = tokenizer([text], return_tensors="pt")
        ids = model.generate(**batch, num_beams=3, num_return_sequences=2)  # its generation config's length
        assert candidates == [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)]
    sampled = generator.generate(texts, DecodingOptions(do_sample=True, num_return=3, top_k=5, seed=1))
    assert sampled == generator.generate(texts, DecodingOptions(do_sample=True, num_return=3, top_k=5, seed=1))
    assert all(len(c) == 3 for c in sampled)
    with pytest.raises(ValueError, match="cannot exceed num_beams"):
        generator.generate(texts, DecodingOptions(num_beams=2, num_return=3))
    with pytest.raises(ValueError, match="input 2 is empty"):
        generator.generate(["a man .", "  "])


def test_long_inputs_are_truncated_and_counted(trained: Path) -> None:
    from paranmt_hf.paraphrase_generator import ParaphraseGenerator

    short = "a man is running in the park ."
    generator = ParaphraseGenerator.from_pretrained(trained)
    generator.max_input_tokens = len(generator.tokenizer(short)["input_ids"])
    out = generator.paraphrase([short, "the old cat " * 20 + "."])
    assert len(out) == 2 and generator.report.truncated == 1 and generator.report.inputs == 2


def test_evaluation_beside_the_copy_baseline(trained: Path) -> None:
    evaluation = json.loads((trained / "evaluation.json").read_text(encoding="utf-8"))
    copy, generated = evaluation["copy"], evaluation["generator"]
    assert copy["self_bleu"] == pytest.approx(100.0) and copy["copy_rate"] == 1.0
    assert copy["trigram_overlap_vs_input"] == 1.0
    assert generated["self_bleu"] < copy["self_bleu"] and 0 <= generated["copy_rate"] <= 1
    assert 0 <= generated["bleu_vs_reference"] <= 100 and 0 <= generated["sentence_bleu_vs_input"] <= 1
    assert len(evaluation["examples"]) == 10 and evaluation["inputs"] == 12


def test_cosines_under_an_encoder(trained: Path) -> None:
    from paranmt_hf import build_encoder
    from paranmt_hf.paraphrase_generator import ParaphraseGenerator
    from paranmt_hf.paraphrase_generator.evaluate import evaluate_generator

    encoder = build_encoder("word", [a + " " + b for a, b, _ in pairs()], embedding_dim=8, seed=0)
    inputs = ["a man is running in the park .", "the teacher is singing at home ."]
    result = evaluate_generator(ParaphraseGenerator.from_pretrained(trained), inputs, ["a man runs in the park .",
                                "the teacher sings at home ."], encoder)
    assert result["copy"]["cosine_input_output"] == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= result["generator"]["cosine_input_output"] <= 1.0
    assert "cosine_output_reference" in result["generator"]


def test_paraphrase_command_on_text_and_files(trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from paranmt_hf.paraphrase_generator import DecodingOptions, ParaphraseGenerator

    expected = ParaphraseGenerator.from_pretrained(trained).paraphrase(["a man is running in the park ."],
                                                                      DecodingOptions(num_beams=2))
    assert main(["paraphrase", str(trained), "a man is running in the park .", "--num-beams", "2",
                 "--no-progress"]) == 0
    assert capsys.readouterr().out.splitlines() == expected
    source = tmp_path / "in.txt"
    source.write_text("a man is running in the park .\n\nthe woman is eating at home .\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    args = ["paraphrase", str(trained), "--input", str(source), "--output", str(out), "--num-beams", "3",
            "--num-return", "2", "--no-progress"]
    assert main(args) == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r[0] for r in rows] == ["a man is running in the park ."] * 2 + ["the woman is eating at home ."] * 2
    assert "1 empty lines skipped" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="exists"):
        main(args)
    with pytest.raises(SystemExit, match="num_beams"):
        main(["paraphrase", str(trained), "x", "--num-beams", "1", "--num-return", "2"])


def test_a_model_that_is_not_seq2seq_is_refused(tmp_path: Path) -> None:
    from paranmt_hf import build_encoder

    build_encoder("word", ["a b c"], embedding_dim=4).save_pretrained(tmp_path / "encoder")
    with pytest.raises(SystemExit, match="not an encoder-decoder"):
        main(["paraphrase", str(tmp_path / "encoder"), "a b"])


def test_a_score_bound_needs_scores(tmp_path: Path) -> None:
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{a}\t{b}\n" for a, b, _ in pairs()), encoding="utf-8")
    with pytest.raises(SystemExit, match="no paraphrase score"):
        main(["train-generator", str(data), "--output", str(tmp_path / "m"), "--size", "tiny"])
    assert not (tmp_path / "m").exists()


def test_publish_writes_the_generator_card(trained: Path, tmp_path: Path) -> None:
    from huggingface_hub import ModelCard

    out = tmp_path / "hub"
    assert main(["publish", str(trained), "--output", str(out), "--model-id", "me/tiny-paraphraser"]) == 0
    card = ModelCard.load(out / "README.md")
    assert card.data.pipeline_tag == "text2text-generation" and "paraphrase-generation" in card.data.tags
    text = card.text
    assert "me/tiny-paraphraser" in text and "| BLEU against the input (corpus, 0-100) |" in text
    assert "0.7 <= paraphrase_score <= 1.0" in text and "copy" in text
    for name in ("config.json", "model.safetensors", "tokenizer.json", "generator_summary.json", "evaluation.json"):
        assert (out / name).is_file(), name


def test_ctranslate2_converts_a_from_scratch_model_faithfully(trained: Path, tmp_path: Path) -> None:
    """opus-mt's conventions (pad last, zero pad row): CTranslate2's greedy output equals transformers'."""
    ctranslate2 = pytest.importorskip("ctranslate2")
    from paranmt_hf.paraphrase_generator import DecodingOptions, ParaphraseGenerator

    generator = ParaphraseGenerator.from_pretrained(trained)
    tokenizer, model = generator.tokenizer, generator.model
    pad = tokenizer.pad_token_id
    assert pad == len(tokenizer) - 1 and float(model.get_input_embeddings().weight[pad].detach().abs().sum()) == 0.0
    ctranslate2.converters.TransformersConverter(str(trained)).convert(str(tmp_path / "ct2"), quantization="float32")
    translator = ctranslate2.Translator(str(tmp_path / "ct2"), device="cpu")
    texts = [a for a, _, _ in pairs()[::17]]
    expected = generator.paraphrase(texts, DecodingOptions(num_beams=1, max_new_tokens=40))
    results = translator.translate_batch([tokenizer.convert_ids_to_tokens(tokenizer(t).input_ids) for t in texts],
                                         beam_size=1, min_decoding_length=0, max_decoding_length=40)
    assert [tokenizer.convert_tokens_to_string(r.hypotheses[0]).strip() for r in results] == expected


def test_read_pairs_mixes_named_and_plain_files(tmp_path: Path) -> None:
    from paranmt_hf.paraphrase_generator import read_pairs

    named = tmp_path / "bt.tsv"
    named.write_text("reference\tparaphrase\ttranslation_cost\tsource\na b\tc d\t0.5\tx y\ne f\tg h\t0.25\tz\n",
                     encoding="utf-8")
    plain = tmp_path / "pairs.tsv"
    plain.write_text("i j\tk l\t0.9\nbroken line\n", encoding="utf-8")
    pairs = read_pairs([named, plain])
    assert pairs.text_a == ["a b", "e f", "i j"] and pairs.text_b == ["c d", "g h", "k l"]
    assert pairs.columns == {"paraphrase_score": [None, None, 0.9], "translation_cost": [0.5, 0.25, None]}
    assert pairs.bad_lines == 1


def test_paraphrase_do_sample_draws_independent_samples(trained: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    """The README's `paraphrase --do-sample --top-p 0.9 --num-return 5`: 5 samples (beam 1), through the translation
    engine's batched generate."""
    from paranmt_hf.corpus.translation.transformers_engine import TransformersTranslator

    calls: list[int] = []
    original = TransformersTranslator.translate_ids

    def spy(self: TransformersTranslator, ids: list[list[int]], seed: int | None, progress: object = None) -> object:
        calls.append(self.plan.num_beams)
        return original(self, ids, seed, progress)

    monkeypatch.setattr(TransformersTranslator, "translate_ids", spy)
    texts = ["a man is running in the park .", "the woman is eating at home ."]
    assert main(["paraphrase", str(trained), *texts, "--do-sample", "--top-p", "0.9", "--num-return", "5",
                 "--no-progress"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 10 and calls == [1]
    with pytest.raises(SystemExit, match=r"cannot exceed num_beams \(4\)"):  # beam search: 4 by default
        main(["paraphrase", str(trained), texts[0], "--num-return", "5", "--no-progress"])


def test_the_command_says_where_the_pairs_went_and_what_the_time_limit_bounds(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture) -> None:
    """The default bounds, the held-out set and --max-pairs each say how many pairs they took; --max-cpu-minutes
    bounds training alone, and the command says so with the time it took in all."""
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in pairs()), encoding="utf-8")
    capsys.readouterr()
    assert main(["train-generator", str(data), "--output", str(tmp_path / "model"), "--size", "tiny",
                 "--vocab-size", "80", "--held-out", "4", "--max-pairs", "50", "--max-cpu-minutes", "0.0001",
                 "--batch-size", "16", "--num-beams", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    total = len(pairs())
    within = len(SUBJECTS) * len(VERBS) * len(PLACES)
    line = next(text for text in err.splitlines() if text.startswith("data: "))
    assert line.startswith(f"data: read {total:,} pairs; {within:,} within the bounds (paraphrase_score 0.7-1, "
                           "trigram_overlap <= 0.5; widen them"), line
    assert "4 held out for the evaluation" in line and "over --max-pairs" in line
    assert line.endswith("50 pairs trained on (100 examples in both directions)"), line
    assert "time: training stopped at --max-cpu-minutes 0.0001 (" in err and "in all" in err


def test_tokenized_text_is_scored_without_sacrebleu_warnings(caplog: pytest.LogCaptureFixture) -> None:
    """ParaNMT's text is tokenized by design ('... guitar .'): sacrebleu is told so, instead of warning twice per
    corpus BLEU that the data looks tokenized."""
    from paranmt_hf.paraphrase_generator.evaluate import paraphrase_metrics

    inputs = [f"a man number {i} plays the guitar ." for i in range(120)]
    outputs = [f"a man {i} is playing a guitar ." for i in range(120)]
    with caplog.at_level("WARNING"):
        metrics = paraphrase_metrics(inputs, outputs, inputs)
    assert 0 < metrics["self_bleu"] < 100 and metrics["bleu_vs_reference"] == metrics["self_bleu"]
    assert not [r for r in caplog.records if r.name.startswith("sacrebleu")], caplog.text
