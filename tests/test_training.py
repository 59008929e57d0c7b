"""Training: recipes, data sources, the CLI end to end, determinism, resume, and multi-process (torchrun) pools."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from paranmt_hf import ParaNMTEncoder
from paranmt_hf.cli.main import main as cli
from paranmt_hf.training.data import PairSource, has_bitext, load_pairs
from paranmt_hf.training.recipes import RECIPES, get_recipe
from paranmt_hf.training.trainer import run_folder

SUBJECTS = [
    "a man",
    "a woman",
    "the dog",
    "two kids",
    "a chef",
    "the old cat",
    "a girl",
    "my friend",
    "the band",
    "a cyclist",
]
ACTIONS = [
    ("plays guitar", "is playing a guitar"),
    ("runs in the park", "is running in a park"),
    ("cooks dinner", "is making dinner"),
    ("reads a book", "is reading a novel"),
]


def write_pairs(path, n=40):
    rows = []
    for i in range(n):
        subject, (a, b) = SUBJECTS[i % len(SUBJECTS)], ACTIONS[(i // len(SUBJECTS)) % len(ACTIONS)]
        rows.append(f"{subject} {a} .\t{subject} {b} .\n")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(rows)
    return str(path)


def test_recipes_match_the_papers():
    acl = get_recipe("acl2018-lstm")
    assert (
        acl.batch_size,
        acl.margin,
        acl.learning_rate,
        acl.megabatch_size,
        acl.scramble_rate,
        acl.epochs,
    ) == (100, 0.4, 1e-3, 40, 0.3, 5.0)
    pras = get_recipe("pras-sp")
    assert (pras.batch_size, pras.margin, pras.megabatch_size, pras.anneal, pras.embedding_dim, pras.vocab_size) == (
        128,
        0.4,
        100,
        150,
        1024,
        50_000,
    )
    changed = pras.replace(batch_size=8, anneal=None)  # None turns an optional field off
    assert (changed.batch_size, changed.anneal, pras.anneal) == (8, None, 150)
    assert not hasattr(pras, "override")  # one way to change a recipe: None means the same everywhere
    with pytest.raises(ValueError, match="unknown recipe field"):
        pras.replace(colour="red")
    with pytest.raises(ValueError, match="cannot be turned off"):
        pras.replace(batch_size=None)
    with pytest.raises(ValueError, match="unknown recipe"):
        get_recipe("nope")


BUILT = {  # what each preset builds: (component kind, embedding width) per component, sentence embedding size
    "acl2018-word": ([("word", 50)], 50),
    "acl2018-trigram": ([("trigram", 300)], 300),
    "acl2018-lstm": ([("lstm", 50)], 50),
    "acl2018-bilstm": ([("bilstm", 50)], 50),
    "acl2018-word+trigram": ([("word", 50), ("trigram", 300)], 350),
    "best": ([("trigram", 300)], 300),  # trained as trigrams; the teacher's table is concatenated at the end
    "best-trigram": ([("trigram", 300)], 300),
    "pras-sp": ([("sp", 1024)], 1024),
    "pras-bitext": ([("sp", 512)], 512),
}


def test_recipes_build_the_models_the_docs_describe():
    from pathlib import Path

    from paranmt_hf.training.initial_model import build_initial_encoder
    from paranmt_hf.training.plan import model_spec

    assert set(BUILT) == set(RECIPES)
    readme = {line.split("|")[1].strip(" `"): line for line in
              (Path(__file__).parents[1] / "docs" / "training.md").read_text().splitlines() if line.startswith("| `")}
    corpus = ["a man plays a guitar .", "two dogs run in the snow ."] * 5
    for name, (components, dim) in BUILT.items():
        encoder = build_initial_encoder(model_spec(get_recipe(name)), corpus, seed=0)
        built = [(c["kind"], c["embedding_dim"]) for c in encoder.config.resolved_components()]
        assert (built, encoder.embedding_dim) == (components, dim), name
        assert encoder.encode(["a man plays"]).shape == (1, dim)
        assert f"→ {dim}-d" in readme[name], f"docs/training.md recipe table: {name} builds a {dim}-d model"


def test_pair_sources(tmp_path):
    pairs = write_pairs(tmp_path / "caps.tsv.gz")
    bitext = write_pairs(tmp_path / "tatoeba-en-es.tsv.gz", 10)
    assert PairSource.parse(pairs).config == "pairs"
    assert PairSource.parse(bitext).config == "bitext"
    assert PairSource.parse(f"processed-5m:{pairs}").config == "processed-5m"
    assert has_bitext([pairs, bitext]) and not has_bitext([pairs])
    with pytest.raises(FileNotFoundError):
        PairSource.parse(str(tmp_path / "missing.tsv"))
    ds = load_pairs([pairs, bitext], seed=1)  # mixed kinds: a label column (1 = translation) for the loss
    assert ds.column_names == ["anchor", "positive", "label"] and len(ds) == 50 and sum(ds["label"]) == 10
    assert load_pairs([pairs]).column_names == ["anchor", "positive"]
    assert len(load_pairs([pairs], max_pairs=7)) == 7
    # "@N" repeats a source N times per epoch (upsampling a small corpus)
    repeated = PairSource.parse(f"processed-5m:{pairs}@3")
    assert (repeated.config, repeated.repeat, repeated.files) == ("processed-5m", 3, (pairs,))
    assert str(repeated).endswith("caps.tsv.gz@3") and PairSource.parse(str(repeated)) == repeated
    assert PairSource.parse(f"{bitext}@2").config == "bitext"
    ds = load_pairs([f"{pairs}@3", bitext], seed=1)
    assert len(ds) == 3 * 40 + 10
    assert sum(a == "a man plays guitar ." for a in ds["anchor"]) == 3 + 1  # once in each file
    with pytest.raises(ValueError, match="repeat count"):
        PairSource.parse(f"{pairs}@0")


def train_flags(data, out, embedding_dim: int, batch_size: int, *extra: str) -> list[str]:
    """``paranmt-hf train`` of a tiny word model (mega-batch of 3) on ``data`` into ``out``, then ``extra``."""
    return ["train", "--train", str(data), "--output", str(out), "--kind", "word", "--embedding-dim",
            str(embedding_dim), "--batch-size", str(batch_size), "--megabatch-size", "3", "--no-progress", *extra]


def _train(tmp_path, name, *extra):
    out = tmp_path / name
    dev = ["--lr", "0.01", "--save-steps", "3", "--dev", "STS17:en-en", "--keep-checkpoints"]  # initial-model/
    assert cli(train_flags(write_pairs(tmp_path / "pairs.tsv.gz"), out, 16, 4, *dev, *extra)) == 0
    return out


SENTENCES = ["a man plays guitar .", "the dog is running in a park .", "two kids read a book ."]


@pytest.mark.data
def test_cli_training_writes_a_loadable_trained_model(tmp_path, data_dir):
    out = _train(tmp_path, "model", "--max-steps", "6")
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == 6 and summary["world_size"] == 1
    assert summary["recipe"]["megabatch_size"] == 3
    # dev evaluated every 3 steps (--save-steps), the last time on the final model: its score is that model's
    assert len(summary["dev_scores"]) == 2
    from sentence_transformers import SentenceTransformer

    from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator

    evaluator = STSSuiteEvaluator(["STS17:en-en"], data_dir=data_dir, name="dev")
    final = evaluator(SentenceTransformer(str(out), trust_remote_code=True))
    assert summary["dev_scores"][-1]["eval_dev_mean_pearson"] == pytest.approx(final["dev_mean_pearson"], abs=1e-5)
    assert summary["dev_scores"][0]["eval_dev_mean_pearson"] != summary["dev_scores"][-1]["eval_dev_mean_pearson"]
    # M - 1 previous mini-batches of 4
    assert summary["loss_stats"] == {"pool_pairs": 8, "pool_minibatches": 2, "minibatches_seen": 6}
    trained = ParaNMTEncoder.from_pretrained(out).encode(SENTENCES)
    initial = ParaNMTEncoder.from_pretrained(run_folder(out) / "initial-model").encode(SENTENCES)
    assert not np.allclose(trained, initial)  # the weights moved


@pytest.mark.data
def test_training_is_deterministic_for_a_seed(tmp_path, data_dir):
    a = ParaNMTEncoder.from_pretrained(_train(tmp_path, "a", "--max-steps", "4")).encode(SENTENCES)
    b = ParaNMTEncoder.from_pretrained(_train(tmp_path, "b", "--max-steps", "4")).encode(SENTENCES)
    np.testing.assert_array_equal(a, b)
    c = ParaNMTEncoder.from_pretrained(_train(tmp_path, "c", "--max-steps", "4", "--seed", "5")).encode(SENTENCES)
    assert not np.allclose(a, c)


@pytest.mark.data
@pytest.mark.timeout(600)
def test_torchrun_two_processes_share_the_megabatch_pool(tmp_path, data_dir):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]  # a free port
    cmd = [*torchrun, "-m", "paranmt_hf.cli.main", *train_flags(data, out, 8, 2, "--max-steps", "4", "--save-steps",
                                                                 "100", "--optimizer", "lazy_adam",
                                                                 "--keep-checkpoints", "--dev")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=540, cwd=tmp_path)
    assert proc.returncode == 0, _ranks_errors(proc.stderr)
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["world_size"] == 2
    # each pool entry holds both processes' mini-batches: (M - 1) entries x 2 processes x 2 pairs
    assert summary["loss_stats"] == {"pool_pairs": 8, "pool_minibatches": 2, "minibatches_seen": 4}
    trained = ParaNMTEncoder.from_pretrained(out)
    assert trained.config.sparse_embeddings is False  # saved for fine-tuning with any optimizer
    initial = ParaNMTEncoder.from_pretrained(run_folder(out) / "initial-model")
    assert not np.allclose(trained.encode(SENTENCES), initial.encode(SENTENCES))


def _ranks_errors(stderr: str) -> str:
    """What each process of a failed ``torchrun`` said went wrong (the first failing rank's lines come long before
    the launcher's summary, which alone fills the end of the output), then the end of the output."""
    said = [line for line in stderr.splitlines() if "Error" in line or line.startswith("paranmt-hf ")]
    return "\n".join([*dict.fromkeys(said), "--- end of the output:", stderr[-2000:]])


def test_dev_none_trains_without_dev_evaluation(tmp_path, monkeypatch):
    """``--dev none`` (as its help says) turns dev evaluation off; ``none`` with tasks is refused clearly."""
    monkeypatch.setenv("PARANMT_HF_DATA", str(tmp_path / "no-eval-data"))  # no dev data is read
    out = _train(tmp_path, "nodev", "--max-steps", "2", "--dev", "none")
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == 2 and summary["dev_scores"] == []
    with pytest.raises(SystemExit, match="--dev none"):
        _train(tmp_path, "mixed", "--max-steps", "1", "--dev", "none", "STS17:en-en")
    with pytest.raises(SystemExit, match="--dev: unknown task 'STS99'"):
        _train(tmp_path, "unknown", "--max-steps", "1", "--dev", "STS99")


def test_lazy_adam_refuses_gradient_clipping_in_one_sentence_and_auto_goes_dense(tmp_path):
    from paranmt_hf.training.optim import uses_lazy_adam

    flags = train_flags(write_pairs(tmp_path / "pairs.tsv.gz"), tmp_path / "clip", 16, 4, "--optimizer", "lazy_adam",
                        "--max-grad-norm", "5", "--max-steps", "1", "--dev", "none")
    with pytest.raises(SystemExit, match=r"max_grad_norm \(train --max-grad-norm\) 5.0 clips dense gradients") as out:
        cli(flags)  # refused by the training plan before any work: one line, exit 2 (a usage error)
    assert out.value.code == 2 and "\n" not in str(out.value) and not (tmp_path / "clip").exists()
    big = type("Model", (), {"components": [type("C", (), {"embedding": torch_embedding(50_000, 1024)})()]})()
    assert uses_lazy_adam("auto", 0.0, big) and not uses_lazy_adam("auto", 5.0, big)  # clipping asked: dense Adam
    # one rule (optim.optimizer_conflict), worded for the CLI by the plan and for Python callers by uses_lazy_adam
    with pytest.raises(ValueError, match="needs optimizer='adam'"):
        uses_lazy_adam("lazy_adam", 5.0, big)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        uses_lazy_adam("sgd", 0.0, big)
    from dataclasses import replace

    from paranmt_hf.training.plan import check_trainable
    from paranmt_hf.training.recipes import RecipeError

    with pytest.raises(RecipeError, match=r"optimizer \(train --optimizer\) must be one of auto, lazy_adam, adam"):
        check_trainable(replace(get_recipe("pras-sp"), optimizer="sgd"))


def torch_embedding(rows: int, dim: int):
    """A stand-in embedding whose weight has ``rows * dim`` elements (no memory for them)."""
    return type("E", (), {"weight": type("W", (), {"numel": lambda self: rows * dim})()})()


def test_one_flag_table_turns_recipe_fields_off():
    from paranmt_hf.cli.main import build_parser
    from paranmt_hf.cli.recipe_flags import MODEL_FLAGS, TRAINING_FLAGS, recipe_changes

    parser = build_parser()
    args = parser.parse_args(
        ["train", "--recipe", "pras-sp", "--anneal", "none", "--vocab-size", "none", "--lr", "0.1"]
    )
    recipe = get_recipe("pras-sp").replace(**recipe_changes(args, {**MODEL_FLAGS, **TRAINING_FLAGS}))
    assert (recipe.anneal, recipe.vocab_size, recipe.learning_rate, recipe.megabatch_size) == (None, None, 0.1, 100)
    args = parser.parse_args(
        ["build", "--recipe", "acl2018-word", "--word-vectors", "none", "--input", "x", "--output", "y"]
    )
    assert get_recipe("acl2018-word").replace(**recipe_changes(args, MODEL_FLAGS)).word_vectors is None
    # train and build read the model flags from the same table
    build_flags = {a.dest for a in parser._subparsers._group_actions[0].choices["build"]._actions}
    assert {f.replace("-", "_") for f in MODEL_FLAGS} <= build_flags
    for bad in (["--batch-size", "none"], ["--sampling", "BEST"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["train", *bad])
    with pytest.raises(ValueError, match="cannot be turned off"):
        get_recipe("best").replace(batch_size=None)


def test_lstm_peepholes_is_a_shared_model_flag(tmp_path):
    """``--lstm-peepholes`` comes from the one flag table: ``train`` builds the peephole LSTM that ``build`` does."""
    from paranmt_hf.cli.main import build_parser
    from paranmt_hf.cli.recipe_flags import MODEL_FLAGS, recipe_changes
    from paranmt_hf.modeling.peephole_lstm import PeepholeLSTM

    parser = build_parser()
    for command in (["train"], ["build", "--input", "x", "--output", "y"]):
        def changes(*flags: str, command: list[str] = command) -> dict:
            return recipe_changes(parser.parse_args([*command, *flags]), MODEL_FLAGS)

        assert changes("--lstm-peepholes")["lstm_peepholes"] is True
        assert changes("--no-lstm-peepholes")["lstm_peepholes"] is False
        assert "lstm_peepholes" not in changes()  # not given: the preset's value
    out = _train(tmp_path, "peepholes", "--kind", "lstm", "--lstm-peepholes", "--max-steps", "1", "--dev", "none")
    built = tmp_path / "built"
    assert cli(["build", "--kind", "lstm", "--embedding-dim", "16", "--lstm-peepholes", "--input",
                str(tmp_path / "pairs.tsv.gz"), "--output", str(built)]) == 0
    for path in (out, run_folder(out) / "initial-model", built):
        encoder = ParaNMTEncoder.from_pretrained(path)
        assert encoder.config.lstm_peepholes is True and isinstance(encoder.model.components[0].rnn, PeepholeLSTM)
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["recipe"]["lstm_peepholes"] is True
    initial = json.loads((run_folder(out) / "initial-model" / "config.json").read_text())
    assert json.loads((built / "config.json").read_text()) == initial  # train starts from the model build writes


def test_build_takes_a_recipe_and_writes_its_initial_model(tmp_path):
    corpus = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / "built"
    assert cli(["build", "--recipe", "acl2018-trigram", "--embedding-dim", "12", "--input", corpus,
                "--output", str(out)]) == 0
    enc = ParaNMTEncoder.from_pretrained(out)
    assert (enc.config.kind, enc.embedding_dim) == ("trigram", 12)


@pytest.mark.data
@pytest.mark.timeout(300)
def test_a_short_real_run_improves_dev_pearson(tmp_path, data_dir):
    """End to end on real data: 120 steps on the ParaNMT sample must raise STS-B validation Pearson (a loss with
    the wrong sign, or one that does not reach the weights, fails this)."""
    from paranmt_hf.evaluation import evaluate

    out = tmp_path / "real"
    sample = data_dir / "train" / "paranmt5m-sample-10k.tsv.gz"
    assert cli(["train", "--train", f"processed-5m:{sample}", "--output", str(out), "--kind", "trigram",
                "--embedding-dim", "64", "--batch-size", "100", "--megabatch-size", "5", "--lr", "0.01",
                "--max-pairs", "4000", "--max-steps", "120", "--save-steps", "1000", "--dev", "--no-progress",
                "--keep-checkpoints"]) == 0

    def dev_pearson(path):
        results = evaluate(ParaNMTEncoder.from_pretrained(path), ["STSBenchmark:validation"], data_dir=data_dir)
        return 100 * results["STSBenchmark"].scores["validation"][0]["paper_pearson"]

    before, after = dev_pearson(run_folder(out) / "initial-model"), dev_pearson(out)
    assert after > before + 2.0, (before, after)  # measured 62.6 -> 66.0


def test_a_diverged_run_stops_in_one_sentence_and_saves_nothing(tmp_path, capsys):
    """An overflowing learning rate: the weights turn to NaN; the run stops before any checkpoint or model of them."""
    out = tmp_path / "diverged"
    flags = train_flags(write_pairs(tmp_path / "pairs.tsv.gz"), out, 16, 4, "--lr", "1e300", "--save-steps", "3",
                        "--max-steps", "6", "--dev", "none")
    with pytest.raises(SystemExit) as stopped:
        cli(flags)
    line = [x for x in capsys.readouterr().err.splitlines() if x.startswith("paranmt-hf train:")][-1]
    assert stopped.value.code == 1 and "the run diverged" in line and "was not saved" in line, line
    assert not out.exists() and not list((run_folder(out) / "checkpoints").glob("checkpoint-*"))


@pytest.mark.parametrize("flag", ["--lr", "--epochs", "--margin"])
def test_numbers_that_are_not_finite_are_refused(tmp_path, flag, capsys):
    with pytest.raises(SystemExit) as refused:
        cli(train_flags(tmp_path / "pairs.tsv", tmp_path / "out", 16, 4, flag, "inf"))
    assert refused.value.code == 2 and "must be a finite number, got inf" in capsys.readouterr().err
    from dataclasses import replace

    from paranmt_hf.training.plan import check_trainable
    from paranmt_hf.training.recipes import RecipeError

    with pytest.raises(RecipeError, match="learning_rate must be a finite number"):  # the Python API's check
        check_trainable(replace(get_recipe("pras-sp"), learning_rate=float("inf")))
