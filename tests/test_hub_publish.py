"""``publish``: a complete, pickle-free Hub folder that every loader reads identically; the push (mocked, offline)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import huggingface_hub
import numpy as np
import pytest
from huggingface_hub import ModelCard

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.cli.main import main
from paranmt_hf.evaluation import write_results
from paranmt_hf.evaluation.runner import TaskResult
from paranmt_hf.hub import PublishError, check_hub_folder, publish
from paranmt_hf.training.recipes import get_recipe

CORPUS = ["a man plays the guitar .", "someone is playing a guitar .", "a dog runs in the park .",
          "the cat sleeps on the sofa .", "a woman is slicing an onion ."]
SENTENCES = ["A man is playing a guitar.", "Someone plays the guitar.", "A dog runs through the snow."]
REPO = "me/tiny"


def sts_result(task: str, spearman: float, pearson: float) -> TaskResult:
    pooled = {"cosine_spearman": spearman, "main_score": spearman, "paper_pearson_mean": pearson,
              "paper_pearson": pearson, "hf_subset": "default", "languages": ["eng-Latn"]}
    return TaskResult(task, "sts", {"test": [pooled]}, 0.1, paper_year=True)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A trained-looking model folder: training summary with local paths, checkpoints and a pickle to leave out."""
    directory = tmp_path_factory.mktemp("model")
    build_encoder("word", corpus=CORPUS, embedding_dim=8).save_pretrained(directory, static=True)
    summary = {"recipe": get_recipe("acl2018-word").to_dict(), "seed": 0, "steps": 10, "seconds": 1.0,
               "sources": ["pairs:/private/data/pairs.tsv.gz"], "output_dir": str(directory), "train_pairs": 5}
    (directory / "training_summary.json").write_text(json.dumps(summary))
    (directory / "checkpoints" / "checkpoint-10").mkdir(parents=True)
    (directory / "checkpoints" / "checkpoint-10" / "optimizer.pt").write_bytes(b"pickle")
    return directory


@pytest.fixture(scope="module")
def eval_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    years = {f"STS1{i}": sts_result(f"STS1{i}", 0.5 + i / 100, 0.6 + i / 100) for i in range(2, 7)}
    write_results(years, out, REPO, "v1", {"name": REPO, "revision": "v1"})
    return out


@pytest.fixture(scope="module")
def hub_dir(model_dir, eval_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("hub") / "tiny"
    publish(model_dir, out, eval_dir=eval_dir, model_id=REPO)
    return out


def test_folder_layout(hub_dir):
    files = {p.relative_to(hub_dir).as_posix() for p in hub_dir.rglob("*") if p.is_file()}
    assert {"model.safetensors", "config.json", "configuration_paranmt.py", "modeling_paranmt.py", "tokenizer.json",
            "tokenizer_config.json", "modules.json", "paranmt_st_config.json", "config_sentence_transformers.json",
            "input_module_paranmt.py", "featurization_paranmt.py", "tokenization_paranmt.py",
            "static/model.safetensors", "static/tokenizer.json", "static/modules.json", "README.md",
            "training_summary.json", "results/me__tiny/v1/STS12.json", "results/me__tiny/v1/model_meta.json"} <= files
    assert not [f for f in files if f.startswith("checkpoints") or f.endswith((".pt", ".bin", ".pkl"))]
    auto_map = json.loads((hub_dir / "config.json").read_text())["auto_map"]
    assert auto_map["AutoModel"] == "modeling_paranmt.ParaNMTModel"
    summary = (hub_dir / "training_summary.json").read_text()
    assert "/private" not in summary and "output_dir" not in summary
    assert json.loads(summary)["sources"] == ["pairs:pairs.tsv.gz"]
    assert check_hub_folder(hub_dir, require_st=True, require_eval=True) == []
    assert not list(hub_dir.parent.glob(".*publishing"))


def test_card_in_folder(hub_dir):
    card = ModelCard.load(hub_dir / "README.md")
    spearman = [r.metric_value for r in card.data.eval_results if r.metric_type == "cosine_spearman"]
    assert spearman == [52.0, 53.0, 54.0, 55.0, 56.0]
    assert "[`results/me__tiny/v1`](results/me__tiny/v1)" in card.content
    assert "Recipe `acl2018-word`" in card.content


def test_loaders_give_identical_embeddings(hub_dir):
    from transformers import AutoModel, AutoTokenizer

    reference = ParaNMTEncoder.from_pretrained(hub_dir).encode(SENTENCES)
    model = AutoModel.from_pretrained(hub_dir, trust_remote_code=True)  # paranmt_hf imported: its own classes
    tokenizer = AutoTokenizer.from_pretrained(hub_dir)
    out = model(**tokenizer(SENTENCES, padding=True, return_tensors="pt")).pooler_output.detach().numpy()
    np.testing.assert_allclose(out, reference, atol=1e-6)


def test_card_snippets_run(hub_dir):
    """Every python snippet of the card (except mteb, which needs the Hub's datasets) runs on the folder."""
    blocks = re.findall(r"```python\n(.*?)```", (hub_dir / "README.md").read_text(), flags=re.S)
    assert len(blocks) == 6  # paranmt_hf, AutoModel (2), SentenceTransformer, StaticEmbedding, mteb
    normalised = []
    for block in blocks:
        if "import mteb" in block:
            continue
        scope: dict = {}
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)  # the card uses today's names, not renamed ones
            exec(block.replace(f'"{REPO}"', repr(str(hub_dir))), scope)  # noqa: S102 - the card's own snippets
        if "embeddings" in scope:
            emb = np.asarray(scope["embeddings"], dtype=np.float64)
            normalised.append(emb / np.linalg.norm(emb, axis=1, keepdims=True))
    assert len(normalised) == 4  # paranmt_hf, AutoModel, SentenceTransformer, StaticEmbedding
    for emb in normalised[1:]:
        np.testing.assert_allclose(emb, normalised[0], atol=1e-6)


REMOTE_CODE_SCRIPT = """
import importlib.abc, sys, numpy as np, torch
class Block(importlib.abc.MetaPathFinder):  # paranmt_hf not installed (the folder's featuriser would import it)
    def find_spec(self, name, path=None, target=None):
        if name == "paranmt_hf" or name.startswith("paranmt_hf."):
            raise ModuleNotFoundError("blocked: " + name)
sys.meta_path.insert(0, Block())
from transformers import AutoModel, AutoTokenizer
from sentence_transformers import SentenceTransformer
for path, out in zip(sys.argv[1::2], sys.argv[2::2]):
    model = AutoModel.from_pretrained(path, trust_remote_code=True)
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=True)
    assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
    with torch.no_grad():
        emb = model(**tokenizer(SENTENCES, padding=True, return_tensors="pt")).pooler_output.numpy()
    st = SentenceTransformer(path, trust_remote_code=True).encode(SENTENCES)
    np.save(out, np.stack([emb, st]))
assert not [m for m in sys.modules if m.startswith("paranmt_hf")], "paranmt_hf was imported"
"""


def test_remote_code_without_paranmt_hf(hub_dir, tmp_path):
    """Where paranmt_hf is not installed: AutoModel/AutoTokenizer/SentenceTransformer with trust_remote_code."""
    source = tmp_path / "trigram"
    build_encoder("trigram", corpus=CORPUS, embedding_dim=8).save_pretrained(source)
    trigram = publish(source, tmp_path / "hub").folder
    assert {"tokenization_paranmt.py", "paranmt_tokenizer.json"} <= {p.name for p in trigram.iterdir()}
    assert 'AutoTokenizer.from_pretrained("paranmt-hf/trigram", trust_remote_code=True)' in (
        trigram / "README.md").read_text()
    script = f"SENTENCES = {SENTENCES!r}\n" + REMOTE_CODE_SCRIPT
    args = [str(hub_dir), str(tmp_path / "word.npy"), str(trigram), str(tmp_path / "trigram.npy")]
    env = {**os.environ, "HF_MODULES_CACHE": str(tmp_path / "modules"), "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    for folder, name in ((hub_dir, "word"), (trigram, "trigram")):
        reference = ParaNMTEncoder.from_pretrained(folder).encode(SENTENCES)
        for emb in np.load(tmp_path / f"{name}.npy"):
            np.testing.assert_allclose(emb, reference, atol=1e-6)


def test_check_hub_folder_reports_missing_files(hub_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(hub_dir, broken)
    for name in ("model.safetensors", "modeling_paranmt.py", "tokenizer.json", "modules.json", "README.md"):
        (broken / name).unlink()
    (broken / "optimizer.pt").write_bytes(b"x")
    problems = "; ".join(check_hub_folder(broken, require_st=True))
    for expected in ("model.safetensors", "AutoModel -> modeling_paranmt.ParaNMTModel", "tokenizer.json",
                     "modules.json", "README.md", "pickle-based files are not allowed: ['optimizer.pt']"):
        assert expected in problems


def test_publish_refuses_incomplete_folder(model_dir, tmp_path, monkeypatch):
    def save_without_tokenizer(self, directory, sentence_transformers=True, static=False):
        self.model.save_pretrained(directory)

    monkeypatch.setattr(ParaNMTEncoder, "save_pretrained", save_without_tokenizer)
    with pytest.raises(PublishError, match="missing tokenizer_config.json"):
        publish(model_dir, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".*publishing"))


def test_output_and_input_rules(model_dir, hub_dir, tmp_path):
    with pytest.raises(FileExistsError, match="overwrite"):
        publish(model_dir, hub_dir)
    with pytest.raises(PublishError, match="must not be the model folder"):
        publish(model_dir, model_dir, overwrite=True)
    with pytest.raises(FileNotFoundError, match="no saved model"):
        publish(tmp_path / "nothing", tmp_path / "out")
    with pytest.raises(PublishError, match="not a Hub repository id"):
        publish(model_dir, tmp_path / "out", push_repo_id="not a repo id")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.txt").write_text("stale")
    out = publish(model_dir, tmp_path / "full", overwrite=True).folder
    assert not (out / "old.txt").exists() and (out / "model.safetensors").is_file()


def test_publish_never_replaces_its_inputs(model_dir, eval_dir, tmp_path):
    import shutil

    evals = tmp_path / "evals"
    shutil.copytree(eval_dir, evals / "results")
    speed = tmp_path / "speed.json"
    speed.write_text("{}")
    before = sorted(p.relative_to(evals) for p in evals.rglob("*"))
    with pytest.raises(PublishError, match="is the input"):  # --output holds --eval-dir: even --overwrite refuses
        publish(model_dir, evals, eval_dir=evals / "results", model_id=REPO, overwrite=True)
    assert sorted(p.relative_to(evals) for p in evals.rglob("*")) == before
    with pytest.raises(PublishError, match="is the input"):
        publish(model_dir, speed, speed_json=speed, overwrite=True)
    assert speed.read_text() == "{}"


class RecordingApi:
    calls: list = []

    def __init__(self, token=None):
        self.calls.append(("init", {"token": token}))

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))
        return type("Commit", (), {"commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"})()


def test_push_uses_hfapi(model_dir, tmp_path, monkeypatch):
    RecordingApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    published = publish(model_dir, tmp_path / "out", push_repo_id=REPO, private=True, token="hf_x")
    assert published.url == f"https://huggingface.co/{REPO}/commit/abc"
    names = [name for name, _ in RecordingApi.calls]
    assert names == ["init", "create_repo", "upload_folder"]
    assert RecordingApi.calls[0][1] == {"token": "hf_x"}
    assert RecordingApi.calls[1][1] == {"repo_id": REPO, "repo_type": "model", "private": True, "exist_ok": True}
    upload = RecordingApi.calls[2][1]
    assert upload["folder_path"] == str(tmp_path / "out") and upload["repo_id"] == REPO
    assert upload["repo_type"] == "model"
    assert f'ParaNMTEncoder.from_pretrained("{REPO}")' in (tmp_path / "out" / "README.md").read_text()


def test_push_errors_are_clear(model_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(PublishError, match="HF_HUB_OFFLINE.*hf upload me/tiny"):
        publish(model_dir, tmp_path / "offline", push_repo_id=REPO)
    assert (tmp_path / "offline" / "README.md").is_file()  # the folder is kept for a later upload

    class FailingApi(RecordingApi):
        def create_repo(self, repo_id, **kwargs):
            raise ConnectionError("network unreachable")

    monkeypatch.setattr(huggingface_hub, "HfApi", FailingApi)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(PublishError, match="pushing to me/tiny failed: network unreachable"):
        publish(model_dir, tmp_path / "failing", push_repo_id=REPO)


def test_cli(model_dir, eval_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    out = tmp_path / "cli"
    assert main(["publish", str(model_dir), "--output", str(out), "--eval-dir", str(eval_dir)]) == 0
    assert "Hub folder written to" in capsys.readouterr().out
    assert ModelCard.load(out / "README.md").data.model_name == f"paranmt-hf/{model_dir.name}"
    with pytest.raises(SystemExit, match=r"paranmt-hf publish: .*exists and is not empty: choose another folder, "
                       r"or replace it with --overwrite$"):
        main(["publish", str(model_dir), "--output", str(out)])
    with pytest.raises(SystemExit, match="HF_HUB_OFFLINE"):
        main(["publish", str(model_dir), "--output", str(tmp_path / "p"), "--push", REPO, "--private"])


def test_the_folders_are_readable_by_others(model_dir, tmp_path):
    """publish / export / save_pretrained folders were created 0700 whatever the umask."""
    from paranmt_hf.model.export import export_model

    old = os.umask(0o022)
    try:
        out = publish(model_dir, tmp_path / "hub").folder
        exported = export_model(ParaNMTEncoder.from_pretrained(model_dir), tmp_path / "fp16", "fp16").path
    finally:
        os.umask(old)
    for folder in (out, exported):
        modes = {p.relative_to(folder).as_posix(): os.stat(p).st_mode & 0o777 for p in [folder, *folder.rglob("*")]}
        assert modes["."] == 0o755 and all(m in (0o644, 0o755) for m in modes.values()), modes


def test_eval_results_under_another_name_are_published_under_the_model_id(model_dir, eval_dir, tmp_path, caplog):
    import logging

    other = tmp_path / "eval"
    write_results({"STS12": sts_result("STS12", 0.5, 0.6)}, other, f"paranmt-hf/{model_dir.name}", "v1",
                  {"name": f"paranmt-hf/{model_dir.name}", "revision": "v1"})  # `paranmt-hf eval`'s default name
    caplog.set_level(logging.INFO, logger="paranmt_hf")
    out = tmp_path / "hub"
    publish(model_dir, out, eval_dir=other, model_id="me/renamed")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "named" in r.getMessage()]
    meta = json.loads((out / "results" / "me__renamed" / "v1" / "model_meta.json").read_text())
    assert meta["name"] == "me/renamed" and (out / "results" / "me__renamed" / "v1" / "STS12.json").is_file()
    assert not (out / "results" / f"paranmt-hf__{model_dir.name}").exists()


def test_the_card_names_the_weights_licence_and_the_training_data_terms(model_dir, tmp_path):
    from paranmt_hf.hub import render_model_card

    summary = json.loads((model_dir / "training_summary.json").read_text())
    summary["sources"] = ["pairs:/data/train/flickr30k-caption-pairs.tsv.gz",
                          "pairs:/data/train/paranmt5m-sample-10k.tsv.gz@10", "pairs:/mine/pairs.tsv"]
    card = render_model_card(model_dir, training_summary=summary, license="apache-2.0").content
    section = card.split("## Licence", 1)[1].split("\n## ", 1)[0]
    assert "released under `apache-2.0`" in section
    assert "`flickr30k-caption-pairs.tsv.gz`: Flickr30k / Multi30k: non-commercial research use" in section
    assert "`paranmt5m-sample-10k.tsv.gz`: Derived from CzEng 1.6: non-commercial" in section
    assert "`pairs.tsv`: your own data" in section


def test_links_out_of_the_results_folder_are_never_followed(model_dir, eval_dir, tmp_path, caplog):
    """A ``*.json`` link in ``--eval-dir`` to a file outside it (``/etc/passwd``, another model's results) is skipped
    and named in a warning: it is neither read for the card nor copied into the Hub folder."""
    evals = tmp_path / "evals"
    shutil.copytree(eval_dir, evals)
    results = next(p.parent for p in evals.rglob("STS12.json"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    secret = json.loads((results / "STS12.json").read_text())
    secret["task_name"] = "STS17"
    (outside / "STS17.json").write_text(json.dumps(secret))
    (results / "passwd.json").symlink_to(outside / "passwd")
    (results / "STS17.json").symlink_to(outside / "STS17.json")
    (results / "STS12-copy.json").symlink_to(results / "STS12.json")  # a link inside the folder is fine
    out = tmp_path / "hub"
    with caplog.at_level("WARNING"):
        publish(model_dir, out, eval_dir=evals, model_id=REPO)
    copied = sorted(p.name for p in (out / "results").rglob("*") if p.is_file())
    assert "passwd.json" not in copied and "STS17.json" not in copied and "STS12-copy.json" in copied, copied
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert "STS17" not in (out / "README.md").read_text()
    assert caplog.text.count("link outside it") == 1 and "passwd.json" in caplog.text  # one warning, not three


@pytest.mark.parametrize("model_id", ['a"b', "../../x", "/abs/x", "me/tiny\nlicense: other"])
def test_a_model_id_that_is_no_hub_id_is_refused(model_dir, tmp_path, capsys, model_id):
    """It would be pasted unescaped into the card's YAML and Python snippets: refused in one line, nothing written."""
    for flag in ("--model-id", "--push"):
        capsys.readouterr()
        with pytest.raises(SystemExit) as stopped:
            main(["publish", str(model_dir), "--output", str(tmp_path / "hub"), flag, model_id])
        assert stopped.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"paranmt-hf publish: {flag} {model_id!r} is not a Hub "
                                                   "repository id"), err
    with pytest.raises(PublishError, match="model_id .* is not a Hub repository id"):  # the API says its keyword
        publish(model_dir, tmp_path / "hub", model_id=model_id)
    assert not (tmp_path / "hub").exists()


@pytest.mark.parametrize(("flag", "content", "said"), [
    ("--speed", "not json\n", "is not valid JSON"),
    ("--speed", '"a string"\n', "holds a JSON string, not the object or list"),
    ("--speed", None, "is a folder"),
    ("--eval-dir", "{}\n", "is a file, not a folder"),
])
def test_a_speed_json_or_eval_dir_of_the_wrong_kind_is_one_line_before_any_work(model_dir, tmp_path, capsys,
                                                                                 monkeypatch, flag, content, said):
    def never(*args, **kwargs):
        raise AssertionError("the model was loaded before the check")

    monkeypatch.setattr(ParaNMTEncoder, "from_pretrained", never)
    given = tmp_path / "given"
    if content is None:
        given.mkdir()
    else:
        given.write_text(content)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["publish", str(model_dir), "--output", str(tmp_path / "hub"), flag, str(given)])
    err = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 1 and len(err) == 1 and str(given) in err[0] and said in err[0], err
    assert not (tmp_path / "hub").exists()
