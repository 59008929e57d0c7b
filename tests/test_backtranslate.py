"""Back-translation: the transformers engine gives exactly what `model.generate` gives per sentence (n-best lists and
costs); the cost is the teacher-forced NLL per target token; the CLI's output layout, bad input, resumption and
task-independence. Models are built in code (seeded random weights, vocabularies trained on the fly)."""

from __future__ import annotations

import functools
import gzip
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sentencepiece")

from _synthetic_translation import build_translation_model, model_sentences  # noqa: E402

from paranmt_hf.cli.main import main  # noqa: E402
from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions, TransformersTranslator  # noqa: E402

CODES = {"marian": {}, "nllb": {"source_lang": "deu_Latn", "target_lang": "eng_Latn"},
         "m2m100": {"source_lang": "de", "target_lang": "en"}}
SENTENCES = model_sentences(300, seed=0)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {kind: build_translation_model(root / kind, SENTENCES, kind=kind, seed=1) for kind in CODES}


@functools.lru_cache(maxsize=4)
def _load(model_dir: Path) -> tuple[object, object]:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir), AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()


def _generate(model_dir: Path, sentence: str, codes: dict, **kwargs: object) -> tuple[list[list[int]], list[float],
                                                                                       object]:
    """``model.generate`` on one sentence: the candidates' token ids (no start / language / end token) and costs
    from its raw logits (log-softmax over the whole vocabulary, the end token counted, a forced token not)."""
    tokenizer, model = _load(model_dir)
    if codes:
        tokenizer.src_lang = codes["source_lang"]
        forced = tokenizer.get_lang_id(codes["target_lang"]) if hasattr(tokenizer, "get_lang_id") else \
            tokenizer.convert_tokens_to_ids(codes["target_lang"])
        kwargs["forced_bos_token_id"] = forced
    with torch.no_grad():
        out = model.generate(**tokenizer([sentence], return_tensors="pt"), output_logits=True, output_scores=True,
                             return_dict_in_generate=True, **kwargs)
    scores = model.compute_transition_scores(out.sequences, out.logits, getattr(out, "beam_indices", None),
                                             normalize_logits=True)
    eos, skip = model.generation_config.eos_token_id, 1 if codes else 0
    ids, costs = [], []
    for row, logp in zip(out.sequences.tolist(), scores, strict=True):
        generated = row[1:]
        end = generated.index(eos) + 1 if eos in generated else len(generated)
        while end and generated[end - 1] == model.config.pad_token_id and eos not in generated:
            end -= 1
        ids.append(generated[skip : end - (1 if eos in generated[:end] else 0)])
        costs.append(float(-logp[skip:end].sum() / (end - skip)))
    return ids, costs, out


@pytest.mark.parametrize("kind", list(CODES))
def test_transformers_engine_gives_what_generate_gives_per_sentence(models: dict[str, Path], kind: str) -> None:
    # length-sorted batches under a small token budget (several batches, with padding) vs one sentence at a time
    options = DecodingOptions(num_beams=4, num_return=3, batch_tokens=300, **CODES[kind])
    translator = TransformersTranslator(models[kind], options)
    sentences = SENTENCES[:12]
    result = translator.translate(sentences)
    finished = 0
    for sentence, candidates in zip(sentences, result.hypotheses, strict=True):
        ids, costs, out = _generate(models[kind], sentence, CODES[kind], num_beams=4, num_return_sequences=3)
        assert [list(c.token_ids) for c in candidates] == ids
        assert [c.text for c in candidates] == translator.tokenizer.batch_decode(ids, skip_special_tokens=True)
        assert [c.cost for c in candidates] == pytest.approx(costs, abs=2e-5)
        if kind == "marian":  # no forced token, length penalty 1: the cost is minus generate's own beam score
            assert [c.cost for c in candidates] == pytest.approx((-out.sequences_scores).tolist(), abs=2e-5)
        finished += sum(c.finished for c in candidates)
    if kind == "marian":  # (the random NLLB / M2M100 models never stop by themselves)
        assert 0 < finished < 36  # some candidates end with the end token (its log-probability counts), some are cut
    assert result.truncated == [False] * len(sentences)


def test_greedy_equals_generate_and_cost_is_the_teacher_forced_nll(models: dict[str, Path]) -> None:
    translator = TransformersTranslator(models["marian"], DecodingOptions(num_beams=1, batch_tokens=200))
    sentences = SENTENCES[20:40]
    result = translator.translate(sentences)
    tokenizer, model = _load(models["marian"])
    for sentence, (candidate,) in zip(sentences, result.hypotheses, strict=True):
        ids, costs, _ = _generate(models["marian"], sentence, {}, num_beams=1)
        assert [list(candidate.token_ids)] == ids and candidate.cost == pytest.approx(costs[0], abs=2e-5)
        labels = torch.tensor([list(candidate.token_ids) + ([0] if candidate.finished else [])])
        with torch.no_grad():  # HF's own loss: the mean NLL of the labels = tokens + end token
            loss = model(**tokenizer([sentence], return_tensors="pt"), labels=labels).loss
        assert candidate.cost == pytest.approx(float(loss), abs=2e-5)
        assert candidate.tokens == labels.shape[1]


def test_sampling_is_seeded_and_gives_num_return_candidates(models: dict[str, Path]) -> None:
    options = DecodingOptions(do_sample=True, num_return=4, top_k=20, top_p=0.9, temperature=1.3, seed=5)
    translator = TransformersTranslator(models["marian"], options)
    first = translator.translate(SENTENCES[:6])
    again = translator.translate(SENTENCES[:6])
    other = translator.translate(SENTENCES[:6], seed=6)
    assert [len(c) for c in first.hypotheses] == [4] * 6
    assert first.hypotheses == again.hypotheses and first.hypotheses != other.hypotheses


def test_long_sources_are_truncated_and_counted(models: dict[str, Path]) -> None:
    translator = TransformersTranslator(models["marian"], DecodingOptions(num_beams=2, max_length=6))
    long, short = "the big red cat sees the small blue dog and the green house", "a cat"
    result = translator.translate([long, short])
    assert result.truncated == [True, False] and result.truncated_count == 1
    cut = translator.tokenizer(long, truncation=True, max_length=6)["input_ids"]
    assert len(cut) == 6 and len(translator.tokenizer(long)["input_ids"]) > 6
    with torch.no_grad():  # the truncated source is what was translated
        row = translator.model.generate(input_ids=torch.tensor([cut]), num_beams=2)[0].tolist()[1:]
    assert list(result.hypotheses[0][0].token_ids) == row[: row.index(0)] if 0 in row else row


@pytest.mark.parametrize("kind", list(CODES))
def test_ctranslate2_greedy_equals_transformers_greedy_in_float32(models: dict[str, Path], kind: str,
                                                                  tmp_path: Path) -> None:
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

    options = DecodingOptions(num_beams=1, **CODES[kind])
    sentences = SENTENCES[:40]
    hf = TransformersTranslator(models[kind], options).translate(sentences)
    float32 = CTranslate2Options(compute_type="float32", threads=1, cache_dir=str(tmp_path))
    ct2 = CTranslate2Translator(models[kind], options, float32)
    fast = ct2.translate(sentences)
    assert [[c.token_ids for c in h] for h in fast.hypotheses] == [[c.token_ids for c in h] for h in hf.hypotheses]
    assert [[c.text for c in h] for h in fast.hypotheses] == [[c.text for c in h] for h in hf.hypotheses]
    assert [h[0].finished for h in fast.hypotheses] == [h[0].finished for h in hf.hypotheses]
    differences = [abs(a[0].cost - b[0].cost) for a, b in zip(fast.hypotheses, hf.hypotheses, strict=True)]
    # Marian: CTranslate2's vocabulary has no <pad>, so its softmax leaves out the probability transformers gives
    # <pad> (a random model gives it some; a trained opus-mt model ~0); the other models agree to float precision
    assert max(differences) < (0.05 if kind == "marian" else 1e-4)
    assert (tmp_path / next(p.name for p in tmp_path.iterdir()) / "model.bin").is_file()  # converted once, cached
    # beam search: the cost taken from the decoder's scores equals the definition (scoring each candidate)
    beam = CTranslate2Translator(models[kind], DecodingOptions(num_beams=3, num_return=2, **CODES[kind]), float32)
    found = beam.translate(sentences[:15]).hypotheses
    source = [beam.tokenizer.convert_ids_to_tokens(ids) for ids in beam.tokenizer(sentences[:15])["input_ids"]]
    checked = 0
    for tokens, candidates in zip(source, found, strict=True):
        for c in candidates:
            if beam.tokenizer.unk_token_id in c.token_ids:  # (random M2M100 models emit its unnamed "made-up" ids)
                continue
            checked += 1
            target = [*beam.prefix, *beam.tokenizer.convert_ids_to_tokens(list(c.token_ids))]
            log_probs = beam.translator.score_batch([tokens], [target], offset=len(beam.prefix))[0].log_probs
            log_probs = log_probs if c.finished else log_probs[:-1]
            assert c.cost == pytest.approx(-sum(log_probs) / len(log_probs), abs=1e-4) and c.tokens == len(log_probs)
    assert checked > 15
    assert CTranslate2Translator(models[kind], options, CTranslate2Options(compute_type="int8",
                                                                           cache_dir=str(tmp_path))).translate(
        sentences[:3]).hypotheses[0][0].cost > 0


# ---- the command line ------------------------------------------------------------------------------------------


def _bitext(path: Path, count: int = 60, extra: str = "") -> Path:
    lines = [f"english reference {i}\t{s}\n" for i, s in enumerate(model_sentences(count, seed=3))]
    path.write_text("".join(lines) + extra, encoding="utf-8")
    return path


def _lines(path: Path) -> list[list[str]]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return [line.split("\t") for line in data.decode().splitlines()]


def test_cli_writes_the_nbest_layout_and_counts_bad_input(models: dict[str, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    src = _bitext(tmp_path / "bitext.en-de.tsv", 30, extra="a line with one column\n\tan empty source\n"
                  "reference\tthe big red cat sees the small blue dog and the green house and the cat\n")
    out = tmp_path / "bt.tsv.gz"
    assert main(["corpus", "backtranslate", str(src), "-o", str(out), "--model", str(models["marian"]),
                 "--num-beams", "4", "--num-return", "3", "--with-source", "--max-length", "12", "--quiet"]) == 0
    rows = _lines(out)
    assert rows[0] == ["reference", "paraphrase", "translation_cost", "source"]
    assert all(len(r) == 4 and float(r[2]) > 0 for r in rows[1:])
    expected = TransformersTranslator(models["marian"], DecodingOptions(num_beams=4, num_return=3, max_length=12))
    pairs = [line.split("\t") for line in src.read_text().splitlines()]
    valid = [(ref, source) for ref, *rest in pairs if rest and ref.strip() and (source := rest[0]).strip()]
    result = expected.translate([source for _, source in valid])
    assert rows[1:] == [[ref, c.text, repr(c.cost), source]
                        for (ref, source), h in zip(valid, result.hypotheses, strict=True)
                        for c in h if c.text.strip()]  # n-best lists in input order, empty candidates dropped
    empty = sum(not c.text.strip() for h in result.hypotheses for c in h)
    err = capsys.readouterr().err
    assert f"31 sentences; {93 - empty} candidates; {empty} empty candidates" in err
    assert f"{result.truncated_count} truncated sources" in err and result.truncated[-1]
    assert "2 bad (1 missing column, 1 empty side)" in err
    assert src.read_text().count("\n") == 33  # the input is untouched
    assert main(["corpus", "backtranslate", str(src), "-o", str(src), "--model", str(models["marian"]),
                 "--overwrite", "--quiet"]) == 1  # never over an input
    # the output reads back by column name: annotate keeps the cost, a threshold filters on it
    scored = tmp_path / "scored.tsv"
    assert main(["corpus", "annotate", str(out), "-o", str(scored), "--tokenizer", "whitespace", "--measure",
                 "unigram_overlap", "--quiet"]) == 0
    annotated = _lines(scored)
    assert annotated[0] == ["reference", "paraphrase", "translation_cost", "source", "trigram_overlap",
                            "unigram_overlap"]
    assert [r[2] for r in annotated[1:]] == [r[2] for r in rows[1:]]
    kept = tmp_path / "kept.tsv"
    assert main(["corpus", "filter", str(scored), "-o", str(kept), "--filter", "thresholds", "--bound",
                 "translation_cost=:1.5", "--quiet"]) == 0
    assert [r for r in _lines(kept)[1:]] == [r for r in annotated[1:] if float(r[2]) <= 1.5]


def test_cli_rejects_bad_models_and_options_in_one_line(models: dict[str, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    from transformers import BertConfig

    src = _bitext(tmp_path / "bitext.de-en.tsv", 5)
    encoder_only = tmp_path / "bert"
    BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=8).save_pretrained(encoder_only)
    base = ["corpus", "backtranslate", str(src), "-o", str(tmp_path / "out.tsv"), "--quiet"]
    cases = [
        (["--model", str(encoder_only)], "not an encoder-decoder"),
        (["--model", str(tmp_path / "missing")], "not found"),
        (["--model", str(models["nllb"]), "--source-lang", "deu_Latn", "--target-lang", "english"],
         "unknown language code 'english'"),
        (["--model", str(models["m2m100"]), "--source-lang", "de"], "give --target-lang"),
        (["--model", str(models["marian"]), "--source-lang", "de", "--target-lang", "en"], "takes no language codes"),
        (["--model", str(models["marian"]), "--top-k", "5"], "add do_sample=True"),
        (["--model", str(models["marian"]), "--num-beams", "2", "--num-return", "3"], "cannot exceed num_beams"),
        (["--model", str(models["marian"]), "--source-column", "1", "--compute-type", "int8"], "CTranslate2 setting"),
    ]
    for extra, message in cases:
        capsys.readouterr()
        assert main([*base, *extra]) == 1, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (extra, err)
    unnamed = _bitext(tmp_path / "bitext.tsv", 5)
    assert main(["corpus", "backtranslate", str(unnamed), "-o", str(tmp_path / "x.tsv"), "--model",
                 str(models["marian"]), "--quiet"]) == 1
    assert "--source-column" in capsys.readouterr().err


@pytest.mark.parametrize("sample", [False, True])
def test_any_number_of_tasks_gives_the_one_task_output(models: dict[str, Path], tmp_path: Path, sample: bool) -> None:
    src = _bitext(tmp_path / "bitext.en-de.tsv", 24)
    decoding = ["--do-sample", "--num-return", "2", "--seed", "3"] if sample else ["--num-beams", "2"]
    base = ["corpus", "backtranslate", str(src), "--model", str(models["marian"]), "--quiet", "--chunk-bytes", "300",
            *decoding]
    assert main([*base, "-o", str(tmp_path / "one.tsv"), "--tasks", "1", "--workers", "1"]) == 0
    assert main([*base, "-o", str(tmp_path / "three.tsv"), "--tasks", "3", "--workers", "2" if sample else "1"]) == 0
    one = (tmp_path / "one.tsv").read_bytes()
    assert (tmp_path / "three.tsv").read_bytes() == one and one.count(b"\n") > 10


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_output(models: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    src = _bitext(tmp_path / "bitext.en-de.tsv", 60)
    out, whole = tmp_path / "out.tsv", tmp_path / "whole.tsv"
    args = ["corpus", "backtranslate", str(src), "--model", str(models["marian"]), "--num-beams", "2", "--workers",
            "1", "--tasks", "2", "--chunk-bytes", "250", "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "paranmt_hf.cli.main", *args, "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks = tmp_path / ".out.tsv.paranmt-work" / "chunks"
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        if chunks.is_dir() and len(list(chunks.glob("*.json"))) >= 3:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    proc.wait(timeout=60)
    assert proc.returncode != 0, "the run finished before it could be killed"
    assert not out.exists()
    done = len(list(chunks.glob("*.json")))
    capsys.readouterr()
    assert main([*args, "-o", str(out)]) == 0  # the same command again: the finished chunks are reused
    assert f"{done} chunks resumed" in capsys.readouterr().err
    assert main([*args, "-o", str(whole), "--tasks", "1"]) == 0
    assert out.read_bytes() == whole.read_bytes()
