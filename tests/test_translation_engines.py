"""The translation engines' registry, options, placement and the decoding rule both engines share: each task on its
own GPU (device counts faked), one typed options object per engine (a setting of another engine refused before any
work), do-sample = independent samples, impossible combinations refused in one sentence, the same length cap and
end-token rule in both engines, the position limit, strict weight loading and an English target."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sentencepiece")

from _synthetic_translation import build_translation_model, model_sentences  # noqa: E402

from paranmt_hf.cli.main import main  # noqa: E402
from paranmt_hf.corpus.errors import InvalidOptionError  # noqa: E402
from paranmt_hf.corpus.translation.engines import ENGINES, engine_options, load_translator  # noqa: E402
from paranmt_hf.corpus.translation.placement import task_device  # noqa: E402
from paranmt_hf.corpus.translation.transformers_engine import (  # noqa: E402
    DecodingOptions,
    TransformersOptions,
    TransformersTranslator,
    TranslationModelError,
)

SENTENCES = model_sentences(200, seed=0)
NLLB = {"source_lang": "deu_Latn", "target_lang": "eng_Latn"}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("engine-models")
    return {kind: build_translation_model(root / kind, SENTENCES, kind=kind, seed=1) for kind in ("marian", "nllb")}


def _variant(source: Path, target: Path, generation: dict[str, Any] | None = None,
             config: dict[str, Any] | None = None) -> Path:
    """A copy of ``source`` with config / generation config fields changed (weights re-initialised when the config
    changes their shapes: the model is rebuilt from the edited config, seeded)."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, GenerationConfig

    if config:
        edited = AutoConfig.from_pretrained(source)
        for key, value in config.items():
            setattr(edited, key, value)
        torch.manual_seed(0)
        model = AutoModelForSeq2SeqLM.from_config(edited)
        model.generation_config = GenerationConfig.from_pretrained(source)
    else:
        model = AutoModelForSeq2SeqLM.from_pretrained(source)
    for key, value in (generation or {}).items():
        setattr(model.generation_config, key, value)
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    return target


# ---- placement ------------------------------------------------------------------------------------------------


def test_task_device_rule() -> None:
    assert task_device("auto", 0, rank=3) == "cpu"
    assert task_device("cpu", 4, rank=3) == "cpu"
    assert [task_device("auto", 2, rank=r, environ={}) for r in range(5)] == ["cuda:0", "cuda:1", "cuda:0",
                                                                             "cuda:1", "cuda:0"]
    assert task_device("cuda", 4, rank=6, environ={"LOCAL_RANK": "0"}) == "cuda:2"  # a corpus task: its rank
    assert task_device("auto", 4, environ={"LOCAL_RANK": "3", "SLURM_LOCALID": "1"}) == "cuda:3"  # torchrun
    assert task_device("auto", 4, environ={"SLURM_LOCALID": "1"}) == "cuda:1"  # srun
    assert task_device("auto", 2, environ={"LOCAL_RANK": "5"}) == "cuda:1"
    assert task_device("auto", 3, environ={}) == "cuda:0"
    assert task_device("cuda:1", 2, rank=0) == "cuda:1"
    for device, count, message in (("cuda", 0, "sees no CUDA device"), ("cuda:2", 2, "not visible"),
                                   ("gpu", 2, "auto, cpu, cuda or cuda:N"), ("cuda:", 1, "auto, cpu, cuda")):
        with pytest.raises(InvalidOptionError, match=message):
            task_device(device, count, rank=0)


class _FakeModel:
    """Stands for a loaded model: records the device it is moved to."""

    def __init__(self, generation_config: Any) -> None:
        self.generation_config = generation_config
        self.device = None

    def to(self, device: Any) -> _FakeModel:
        self.device = str(device)
        return self

    def eval(self) -> _FakeModel:
        return self


def test_each_task_loads_on_its_own_gpu(models: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    """Two visible GPUs faked: corpus tasks 0-3 load on cuda:0, 1, 0, 1 in both engines (and through the step)."""
    from transformers import GenerationConfig

    from paranmt_hf.corpus.translation import transformers_engine as translation
    from paranmt_hf.corpus.translation.backtranslate import BacktranslateStep

    generation = GenerationConfig.from_pretrained(models["marian"])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(translation, "load_seq2seq_model", lambda *a, **k: _FakeModel(generation))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    loaded = [TransformersTranslator(models["marian"], rank=rank) for rank in range(4)]
    assert [t.model.device for t in loaded] == ["cuda:0", "cuda:1", "cuda:0", "cuda:1"]
    assert str(TransformersTranslator(models["marian"], settings=TransformersOptions(device="cuda:1")).device) == \
        "cuda:1"
    monkeypatch.setenv("LOCAL_RANK", "1")  # torchrun, the API in one's own process
    assert TransformersTranslator(models["marian"]).model.device == "cuda:1"
    step = BacktranslateStep(str(models["marian"]), DecodingOptions(), TransformersOptions())
    step.setup(rank=2, world_size=4)
    assert step._translator.model.device == "cuda:0"

    ctranslate2 = pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation import ctranslate2_engine as translation_ct2

    made: list[dict[str, Any]] = []

    class FakeTranslator:
        def __init__(self, path: str, **kwargs: Any) -> None:
            made.append(kwargs)

    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 2)
    monkeypatch.setattr(translation_ct2, "missing_cuda_runtime", lambda: None)  # a CUDA 12 runtime, faked
    monkeypatch.setattr(ctranslate2, "Translator", FakeTranslator)
    monkeypatch.setattr(translation_ct2, "converted_model", lambda *a, **k: tmp_path)
    monkeypatch.delenv("LOCAL_RANK")
    for rank in range(4):
        load_translator(models["marian"], None, "ctranslate2", rank=rank)
    assert [(m["device"], m["device_index"], m["compute_type"]) for m in made] == [
        ("cuda", 0, "float16"), ("cuda", 1, "float16"), ("cuda", 0, "float16"), ("cuda", 1, "float16")]
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 0)
    load_translator(models["marian"], None, "ctranslate2", rank=1)
    assert (made[-1]["device"], made[-1]["compute_type"]) == ("cpu", "int8")


def test_tasks_sharing_a_gpu_run_one_after_another(models: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """More decoding tasks than GPUs (device counts faked): one task per GPU at a time, said in one line."""
    from paranmt_hf.corpus.pipeline import executors
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation import placement
    from paranmt_hf.corpus.translation.backtranslate import TranslationOptions, backtranslate
    from paranmt_hf.corpus.translation.placement import concurrent_tasks

    assert concurrent_tasks("auto", 1, 2, 2)[0] == 1 and "2 decoding tasks on 1 GPU (cuda:0)" in \
        concurrent_tasks("auto", 1, 2, 2)[1]
    assert concurrent_tasks("auto", 2, 4, 8) == (2, concurrent_tasks("auto", 2, 4, 8)[1]) and \
        "cuda:0 to cuda:1" in concurrent_tasks("auto", 2, 4, 8)[1]
    assert concurrent_tasks("cuda:1", 2, 2, 4)[0] == 1 and "(cuda:1)" in concurrent_tasks("cuda:1", 2, 2, 4)[1]
    for device, gpus, workers, tasks in (("auto", 2, 2, 2), ("auto", 2, 2, 9), ("cpu", 4, 2, 2), ("auto", 0, 2, 2),
                                         ("auto", 1, 1, 3), ("auto", 1, 4, 1)):
        assert concurrent_tasks(device, gpus, workers, tasks) == (workers, None)
    # a pool worker places its task by its slot (unique among the tasks running at once), not by its rank
    assert task_device("auto", 2, rank=5, environ={executors.TASK_SLOT: "0"}) == "cuda:0"
    assert task_device("auto", 2, rank=5, environ={}) == "cuda:1"

    src = tmp_path / "bitext.en-de.tsv"
    src.write_text("".join(f"english reference {i}\t{s}\n" for i, s in enumerate(model_sentences(12, seed=3))),
                   encoding="utf-8")
    started: list[int] = []
    init = executors.CorpusLocalExecutor.__init__

    def record(self: Any, *args: Any, **kwargs: Any) -> None:
        started.append(kwargs["workers"])
        init(self, *args, **kwargs)

    monkeypatch.setattr(executors.CorpusLocalExecutor, "__init__", record)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(placement, "task_device", lambda *args, **kwargs: "cpu")  # the model stays on this CPU
    run = RunOptions(tasks=2, workers=2, chunk_bytes=200, progress=False)
    with caplog.at_level("WARNING", logger="paranmt_hf.corpus"):
        backtranslate([src], tmp_path / "gpu.tsv", models["marian"],
                      TranslationOptions(DecodingOptions(max_new_tokens=4), cleaning=False), run)
    assert started[0] == 1  # the decoding stage: one task at a time on the one GPU
    assert [r.getMessage() for r in caplog.records if "decoding tasks" in r.getMessage()] == [
        "2 decoding tasks on 1 GPU (cuda:0): 1 at a time, each alone on its GPU, the others after them (tasks "
        "sharing a GPU decode more slowly in all than one)"]
    started.clear()
    backtranslate([src], tmp_path / "cpu.tsv", models["marian"],
                  TranslationOptions(DecodingOptions(max_new_tokens=4), TransformersOptions(device="cpu"),
                                     cleaning=False), run)
    assert started[0] == 2  # on the CPU the workers are the run's
    assert (tmp_path / "gpu.tsv").read_bytes() == (tmp_path / "cpu.tsv").read_bytes()


def test_ctranslate2_without_a_cuda_12_runtime_says_so_before_any_work(models: dict[str, Path], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    ctranslate2 = pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation import ctranslate2_engine as translation_ct2

    assert translation_ct2.missing_cuda_runtime() in (None, "libcublas.so.12")  # the real probe answers
    converted: list[Any] = []
    monkeypatch.setattr(translation_ct2, "converted_model", lambda *a, **k: converted.append(a) or tmp_path)
    monkeypatch.setattr(ctranslate2, "Translator", lambda path, **kwargs: kwargs)
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 1)
    monkeypatch.setattr(translation_ct2, "missing_cuda_runtime", lambda: "libcublas.so.12")
    src = tmp_path / "bitext.en-de.tsv"
    src.write_text("english\tdie Katze\n", encoding="utf-8")
    for device in ("auto", "cuda", "cuda:0"):
        assert main(["corpus", "backtranslate", str(src), "-o", str(tmp_path / "out.tsv"), "--model",
                     str(models["marian"]), "--engine", "ctranslate2", "--device", device, "--quiet"]) != 0
        err = capsys.readouterr().err.strip()
        assert "CTranslate2 sees 1 GPU but cannot load libcublas.so.12, the CUDA 12 runtime" in err
        assert "Traceback" not in err and len(err.splitlines()) == 1
        with pytest.raises(InvalidOptionError, match="cannot load libcublas.so.12"):
            load_translator(models["marian"], None, "ctranslate2", device=device)
    assert not converted and not (tmp_path / "out.tsv").exists()  # nothing converted, nothing written
    assert load_translator(models["marian"], None, "ctranslate2", device="cpu").translator["device"] == "cpu"
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 0)  # no GPU: auto is the CPU, no CUDA needed
    assert load_translator(models["marian"], None, "ctranslate2").translator["device"] == "cpu"


# ---- one typed options object per engine -----------------------------------------------------------------------


def test_engine_options_are_typed_and_checked_before_any_work(models: dict[str, Path], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options

    assert engine_options("ctranslate2", {"compute_type": "int8", "device": None}) == \
        CTranslate2Options(compute_type="int8")
    assert engine_options("transformers", {"dtype": "bfloat16"}) == TransformersOptions(dtype="bfloat16")
    for engine, settings, message in (
            ("transformers", {"compute_type": "int8"}, "compute_type is a CTranslate2 setting"),
            ("ctranslate2", {"dtype": "float16"}, "dtype is a transformers setting"),
            ("transformers", {"beams": 3}, "unknown setting 'beams'"),
            ("fairseq", {}, "unknown engine 'fairseq'"),
            ("transformers", {"device": "gpu0"}, "device must be auto"),
            ("transformers", {"dtype": "float8"}, "dtype must be one of")):
        with pytest.raises(InvalidOptionError, match=message):
            engine_options(engine, settings)
    bitext = tmp_path / "bitext.en-de.tsv"
    bitext.write_text("a reference\tein satz\n", encoding="utf-8")
    assert main(["corpus", "make", str(bitext), "-o", str(tmp_path / "made"), "--model", str(models["marian"]),
                 "--compute-type", "int8", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "compute_type is a CTranslate2 setting" in err and "--engine ctranslate2" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bitext.en-de.tsv"]  # nothing started


def test_the_cli_reads_the_engines_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from paranmt_hf.cli import corpus as cli_corpus

    monkeypatch.setitem(ENGINES, "another", TransformersTranslator)
    parser = argparse.ArgumentParser()
    cli_corpus.add_parser(parser.add_subparsers())
    args = parser.parse_args(["corpus", "backtranslate", "x.tsv", "-o", "y.tsv", "--model", "m", "--engine",
                              "another"])
    assert args.engine == "another"


# ---- the decoding rule ------------------------------------------------------------------------------------------


def test_do_sample_means_independent_samples_in_both_engines(models: dict[str, Path], tmp_path: Path) -> None:
    beam4 = _variant(models["marian"], tmp_path / "beam4", generation={"num_beams": 4})
    options = DecodingOptions(do_sample=True, num_return=5, top_p=0.9, seed=2)
    translator = TransformersTranslator(beam4, options)
    assert translator.num_beams == 1 and translator.generate_kwargs()["num_beams"] == 1
    result = translator.translate(SENTENCES[:4]).hypotheses
    assert [len(h) for h in result] == [5] * 4
    assert any(len({c.token_ids for c in h}) > 1 for h in result)  # samples, not one beam's n-best
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

    ct2 = CTranslate2Translator(beam4, options, CTranslate2Options(compute_type="float32", cache_dir=str(tmp_path)))
    assert ct2.translate_kwargs()["beam_size"] == 1 and [len(h) for h in ct2.translate(SENTENCES[:4]).hypotheses] \
        == [5] * 4


def test_impossible_combinations_are_one_sentence_before_any_work(models: dict[str, Path], tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from paranmt_hf.corpus.translation import backtranslate

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(backtranslate, "execute", no_work)  # refused before the runner starts any task
    beam4 = _variant(models["marian"], tmp_path / "beam4", generation={"num_beams": 4})
    src = tmp_path / "bitext.en-de.tsv"
    src.write_text("".join(f"ref {i}\t{s}\n" for i, s in enumerate(SENTENCES[:5])), encoding="utf-8")
    base = ["corpus", "backtranslate", str(src), "-o", str(tmp_path / "out.tsv"), "--quiet"]
    cases = [
        (["--model", str(beam4), "--num-return", "5"], "exceeds the beam width (4"),
        (["--model", str(beam4), "--num-beams", "2", "--num-return", "3"], "cannot exceed num_beams (2)"),
        (["--model", str(beam4), "--do-sample", "--num-beams", "2", "--num-return", "3"], "cannot exceed num_beams"),
        (["--model", str(beam4), "--do-sample", "--num-beams", "2", "--engine", "ctranslate2"],
         "samples with beam 1 only"),
        (["--model", str(beam4), "--max-new-tokens", "600"], "exceeds the 512 positions"),
        (["--model", str(beam4), "--dtype", "float16", "--engine", "ctranslate2"], "dtype is a transformers setting"),
        (["--model", str(beam4), "--device", "tpu"], "device must be auto"),
    ]
    for extra, message in cases:
        capsys.readouterr()
        assert main([*base, *extra]) == 1, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (extra, err)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["beam4", "bitext.en-de.tsv"], extra


def test_the_length_cap_is_the_same_rule_in_both_engines(models: dict[str, Path], tmp_path: Path) -> None:
    """opus-mt's real generation config forces the end token at max_length: neither engine applies it, so a
    capped candidate has no end token in both (and its cost counts no end token)."""
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

    forced = _variant(models["marian"], tmp_path / "forced", generation={"forced_eos_token_id": 0, "max_length": 7})
    options = DecodingOptions(num_beams=1)
    hf = TransformersTranslator(forced, options)
    assert hf.plan.max_new_tokens == 6
    sentences = SENTENCES[:30]
    ours = hf.translate(sentences).hypotheses
    ct2 = CTranslate2Translator(forced, options, CTranslate2Options(compute_type="float32", threads=1,
                                                                    cache_dir=str(tmp_path / "ct2")))
    fast = ct2.translate(sentences).hypotheses
    assert [[c.token_ids for c in h] for h in fast] == [[c.token_ids for c in h] for h in ours]
    assert [[c.finished for c in h] for h in fast] == [[c.finished for c in h] for h in ours]
    capped = [h[0] for h in ours if not h[0].finished]
    assert capped and all(len(c.token_ids) == 6 and c.tokens == 6 for c in capped)
    assert all(len(h[0].token_ids) + 1 == h[0].tokens for h in ours if h[0].finished)
    # the NLLB language token counts in the cap in both engines too
    nllb = _variant(models["nllb"], tmp_path / "nllb7", generation={"max_length": 7})
    options = DecodingOptions(num_beams=1, **NLLB)
    ours = TransformersTranslator(nllb, options).translate(sentences[:10]).hypotheses
    fast = CTranslate2Translator(nllb, options, CTranslate2Options(
        compute_type="float32", threads=1, cache_dir=str(tmp_path / "ct2"))).translate(sentences[:10]).hypotheses
    assert [[c.token_ids for c in h] for h in fast] == [[c.token_ids for c in h] for h in ours]
    assert max(len(h[0].token_ids) for h in ours) == 5  # 6 generated tokens: the language token and 5


def test_ctranslate2_honours_the_generation_config_and_the_positions(models: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    """The README's offline model: 130 positions, generation max_new_tokens 128: no position-encoding crash."""
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

    short = _variant(models["marian"], tmp_path / "short", generation={"max_length": 300},
                     config={"max_position_embeddings": 12})
    settings = CTranslate2Options(compute_type="float32", cache_dir=str(tmp_path / "ct2"))
    translator = CTranslate2Translator(short, DecodingOptions(num_beams=2, max_length=10), settings)
    assert translator.plan.max_new_tokens == 12 and translator.translate_kwargs()["max_decoding_length"] == 12
    result = translator.translate(SENTENCES[:20]).hypotheses
    assert all(len(h[0].token_ids) <= 12 for h in result)
    hf = TransformersTranslator(short, DecodingOptions(num_beams=2, max_length=10)).translate(SENTENCES[:20])
    assert all(len(h[0].token_ids) <= 12 for h in hf.hypotheses)
    with pytest.raises(InvalidOptionError, match="exceeds the 12 positions"):
        CTranslate2Translator(short, DecodingOptions(max_new_tokens=13), settings)
    given = _variant(models["marian"], tmp_path / "given", generation={"max_new_tokens": 4, "max_length": 300})
    translator = CTranslate2Translator(given, DecodingOptions(num_beams=1), settings)
    assert translator.translate_kwargs()["max_decoding_length"] == 4
    assert max(len(h[0].token_ids) for h in translator.translate(SENTENCES[:20]).hypotheses) <= 4


# ---- strict weights, English targets -----------------------------------------------------------------------------


def test_a_model_with_renamed_tensors_is_refused_in_both_engines(models: dict[str, Path], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    import shutil

    from safetensors.torch import load_file, save_file

    renamed = tmp_path / "renamed"
    shutil.copytree(models["marian"], renamed)
    tensors = load_file(renamed / "model.safetensors")
    key = next(k for k in tensors if "encoder.layers.0.self_attn.q_proj.weight" in k)
    tensors[key.replace("q_proj", "query")] = tensors.pop(key)
    save_file(tensors, renamed / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(TranslationModelError, match="do not match its architecture.*missing.*q_proj.*unexpected"):
        TransformersTranslator(renamed)
    src = tmp_path / "bitext.en-de.tsv"
    src.write_text("a reference\tein satz\n", encoding="utf-8")
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

    with pytest.raises(TranslationModelError, match="do not match its architecture"):
        CTranslate2Translator(renamed, None, CTranslate2Options(cache_dir=str(tmp_path / "ct2")))
    assert not (tmp_path / "ct2").is_dir() or not any((tmp_path / "ct2").glob("*/model.bin"))
    for engine in ENGINES:
        capsys.readouterr()
        assert main(["corpus", "backtranslate", str(src), "-o", str(tmp_path / "out.tsv"), "--model", str(renamed),
                     "--engine", engine, "--quiet"]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "do not match its architecture" in err[0], (engine, err)


def test_backtranslation_refuses_a_target_language_other_than_english(models: dict[str, Path], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "bitext.en-de.tsv"
    src.write_text("a reference\tein satz\n", encoding="utf-8")
    assert main(["corpus", "backtranslate", str(src), "-o", str(tmp_path / "out.tsv"), "--model",
                 str(models["nllb"]), "--source-lang", "deu_Latn", "--target-lang", "fra_Latn", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--target-lang fra_Latn is not English" in err[0]
    assert not (tmp_path / "out.tsv").exists()
    # English's codes pass (NLLB, M2M100, mBART)
    from paranmt_hf.corpus.translation.transformers_engine import require_english_target

    for code in ("eng_Latn", "en", "en_XX", None):
        require_english_target(code)


# ---- one corpus whatever the task count -----------------------------------------------------------------------


def test_ctranslate2_sampling_restarts_with_its_seed(models: dict[str, Path], tmp_path: Path) -> None:
    """Two calls with the same seed in one process give the same samples (set_random_seed alone does not)."""
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

    translator = CTranslate2Translator(models["marian"], DecodingOptions(do_sample=True, num_return=3),
                                       CTranslate2Options(compute_type="float32", cache_dir=str(tmp_path)))
    first = translator.translate(SENTENCES[:8], seed=4).hypotheses
    assert translator.translate(SENTENCES[:8], seed=5).hypotheses != first
    assert translator.translate(SENTENCES[:8], seed=4).hypotheses == first


def _read(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


@pytest.mark.parametrize("engine", list(ENGINES))
def test_sampled_backtranslation_is_the_same_for_any_task_count(models: dict[str, Path], tmp_path: Path,
                                                                 engine: str) -> None:
    if engine == "ctranslate2":
        pytest.importorskip("ctranslate2")
    src = tmp_path / "bitext.en-de.tsv"
    src.write_text("".join(f"english reference {i}\t{s}\n" for i, s in enumerate(model_sentences(60, seed=3))),
                   encoding="utf-8")
    base = ["corpus", "backtranslate", str(src), "--model", str(models["marian"]), "--quiet", "--chunk-bytes", "600",
            "--do-sample", "--num-return", "2", "--seed", "3", "--engine", engine]
    if engine == "ctranslate2":
        base += ["--compute-type", "float32"]
    assert main([*base, "-o", str(tmp_path / "one.tsv"), "--tasks", "1", "--workers", "1"]) == 0
    assert main([*base, "-o", str(tmp_path / "three.tsv"), "--tasks", "3", "--workers", "2"]) == 0
    one = _read(tmp_path / "one.tsv")
    assert _read(tmp_path / "three.tsv") == one and one.count(b"\n") > 60  # (empty candidates are dropped)


def test_run_records_the_typed_engine_options(models: dict[str, Path], tmp_path: Path) -> None:
    from paranmt_hf.corpus.translation.backtranslate import engine_settings

    recorded = engine_settings(TransformersOptions(dtype="float32", threads=3))
    assert recorded == {"engine": "transformers", "engine_kwargs": {"device": "auto", "trust_remote_code": False,
                                                                    "dtype": "float32"}}
    assert json.loads(json.dumps(recorded)) == recorded
    assert dataclasses.fields(TransformersOptions)
