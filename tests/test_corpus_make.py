"""The whole flow as one datatrove run (`corpus make`); on the cluster executors: tests/test_corpus_slurm.py and
tests/test_corpus_ray.py."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml

from paranmt_hf.cli.main import main

pytest.importorskip("sentencepiece")


@pytest.fixture(scope="module")
def marian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from _synthetic_translation import build_translation_model, model_sentences

    return build_translation_model(tmp_path_factory.mktemp("mt") / "marian", model_sentences(300), seed=1)


def _bitext(path: Path) -> Path:
    from _synthetic_translation import model_sentences

    sentences = model_sentences(24, seed=7)
    lines = [f"reference {i % 17}\t{s}\n" for i, s in enumerate(sentences)]
    lines += lines[:6]  # the same sentence pairs again, far apart: duplicates across tasks
    random.Random(0).shuffle(lines)
    path.write_text("".join(lines) + "one column only\n", encoding="utf-8")
    return path


def test_make_writes_a_loadable_folder_and_any_task_count_gives_the_same_rows(marian: Path, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture) -> None:
    """One task from the command line, three from Python with one options object per part: the same Parquet bytes
    (the command builds the objects the API takes)."""
    from datasets import load_dataset

    from paranmt_hf.corpus.make import DatasetOptions, make_paranmt
    from paranmt_hf.corpus.measures.registry import MeasureContext
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation.backtranslate import TranslationOptions
    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions
    from paranmt_hf.data.configs import ConfigOptions

    src = _bitext(tmp_path / "bitext.en-de.tsv")
    base = ["corpus", "make", str(src), "--model", str(marian), "--num-beams", "2", "--num-return", "2",
            "--measure", "bleu", "--tokenizer", "whitespace", "--filter", "thresholds", "--bound",
            "translation_cost=:1.9", "--chunk-bytes", "300", "--quiet", "--repo-id", "me/my-paranmt"]
    assert main([*base, "-o", str(tmp_path / "one"), "--tasks", "1", "--workers", "1"]) == 0
    one_err = capsys.readouterr().err
    make_paranmt([src], tmp_path / "three", marian,
                 translation=TranslationOptions(DecodingOptions(num_beams=2, num_return=2)),
                 measures=["bleu"], measure_context=MeasureContext(tokenizer="whitespace"),
                 filter_options=ConfigOptions(filter="thresholds", tokenizer="whitespace", require_english=True,
                                              bounds=(("translation_cost", None, 1.9),)),
                 dataset=DatasetOptions(card={"repo_id": "me/my-paranmt"}),
                 run=RunOptions(tasks=3, workers=2, chunk_bytes=300, progress=False))
    rows = {}
    for name in ("one", "three"):
        ds = load_dataset(str(tmp_path / name), "pairs", split="train", cache_dir=str(tmp_path / f"c-{name}"))
        rows[name] = ds.to_list()
    assert rows["one"] == rows["three"] and rows["one"]
    parquet = {name: {p.name: p.read_bytes() for p in (tmp_path / name / "data" / "pairs").glob("*.parquet")}
               for name in ("one", "three")}
    assert parquet["one"] == parquet["three"]  # the same Parquet bytes, whatever the task count
    assert list(rows["one"][0]) == ["reference", "paraphrase", "translation_cost", "trigram_overlap", "bleu"]
    assert all(r["translation_cost"] <= 1.9 for r in rows["one"])
    pairs = [(r["reference"], r["paraphrase"]) for r in rows["one"]]
    assert len(set(pairs)) == len(pairs)  # de-duplicated, across tasks
    assert "duplicate" in one_err and "1 bad (1 missing column)" in one_err
    card = (tmp_path / "three" / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["configs"][0]["config_name"] == "pairs" and meta["license"] == "unknown"
    assert "- `translation_cost`: negative log-likelihood" in card and "corpus make" in card
    assert "translation_cost" in card and "CzEng" not in card
    assert f"`{marian.name}`" in card and str(marian) not in card  # a local model by its folder name only
    record = (tmp_path / "three" / "export.json").read_text()
    assert src.name in card and str(src) not in card and str(src) not in record  # a source by its file name only


def test_make_that_keeps_no_pair_says_so_and_writes_only_with_allow_empty(marian: Path, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that keeps 0 pairs (here a filter no translation passes) is an error naming why, not "wrote"; the work
    folder stays, so adding --allow-empty finishes without translating again."""
    import pyarrow.parquet as pq

    from paranmt_hf.corpus.translation import engines as translation_engines

    src = _bitext(tmp_path / "bitext.en-de.tsv")
    out = tmp_path / "made"
    base = ["corpus", "make", str(src), "--model", str(marian), "--num-beams", "2", "--tokenizer", "whitespace",
            "--filter", "thresholds", "--bound", "translation_cost=-2:-1", "--quiet", "--workers", "1", "-o",
            str(out)]
    capsys.readouterr()
    assert main(base) == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "no pair was kept" in err[0] and "--allow-empty" in err[0], err
    assert re.search(r"\d+ cost\b", err[0]), err  # why: the counts of the filter's reasons
    assert "allow_empty=True" not in err[0] and "wrote" not in captured.out
    assert not out.exists() and (tmp_path / ".made.paranmt-work" / "chunks").is_dir()
    def no_model(*args: object, **kwargs: object) -> object:
        raise AssertionError("the kept run translated again")

    monkeypatch.setattr(translation_engines, "load_translator", no_model)
    assert main([*base, "--allow-empty"]) == 0  # the kept work is reused: no model is loaded
    assert "wrote" in capsys.readouterr().out
    tables = [pq.read_table(p) for p in (out / "data" / "pairs").glob("*.parquet")]
    assert sum(t.num_rows for t in tables) == 0


def test_make_dataset_options_are_checked_when_built() -> None:
    """A bad de-duplication, key, config name or shard size is one sentence before any work, not a failed task."""
    from paranmt_hf.corpus.errors import InvalidOptionError
    from paranmt_hf.corpus.make import DatasetOptions
    from paranmt_hf.utils.atomic import UnsafeNameError

    assert DatasetOptions(dedup=None).dedup is None and DatasetOptions().dedup == "first"
    for kwargs, error, message in (({"dedup": "last"}, InvalidOptionError, "unknown dedup 'last'"),
                                   ({"dedup_key": "text"}, InvalidOptionError, "unknown dedup_key 'text'"),
                                   ({"shard_rows": 0}, InvalidOptionError, "shard_rows must be >= 1"),
                                   ({"config": "../pairs"}, UnsafeNameError, "the config name '../pairs'")):
        with pytest.raises(error, match=re.escape(message)):
            DatasetOptions(**kwargs)


def test_make_takes_its_scorer_by_name_because_the_run_records_it(tmp_path: Path) -> None:
    """A loaded encoder has no stable name for the run's identity (a resume compares it): refused in one sentence."""
    from paranmt_hf.corpus.errors import InvalidOptionError
    from paranmt_hf.corpus.make import make_paranmt
    from paranmt_hf.corpus.measures.registry import MeasureContext

    src = _bitext(tmp_path / "bitext.en-de.tsv")
    with pytest.raises(InvalidOptionError, match="scorer .* as a folder or Hub id, not a loaded object"):
        make_paranmt([src], tmp_path / "made", "no-model", measure_context=MeasureContext(encoder=object()))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bitext.en-de.tsv"]
