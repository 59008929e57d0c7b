"""Save once, load everywhere: paranmt_hf, AutoModel/AutoTokenizer (registered), and Hub remote code in a fresh
process where paranmt_hf cannot be imported. Every encoder kind and combinations give identical embeddings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from _corpus import SENTENCES as ENGLISH

from paranmt_hf import ParaNMTEncoder, build_encoder

CORPUS = ENGLISH * 4
SENTENCES = ["A man plays the guitar.", "Dogs are running!", "", "zzz unseen qqq", "A WOMAN slices onions."]
KINDS = ["word", "trigram", "sp", "subword", "lstm", "bilstm", "gran", "trigram+word", "trigram+subword", "word+lstm"]


def _build(kind: str):
    extra = {"vocab_size": 60} if kind in ("sp", "subword") else {}
    if kind == "bilstm":
        extra["bilstm_merge"] = "concat"
    combination = "add" if kind == "word+lstm" else "concat"
    return build_encoder(kind, CORPUS, embedding_dim=8, combination=combination, seed=1, **extra)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, tuple[str, np.ndarray]]:
    out = {}
    for kind in KINDS:
        enc = _build(kind)
        d = str(tmp_path_factory.mktemp(kind.replace("+", "_")))
        enc.save_pretrained(d, sentence_transformers=False)
        out[kind] = (d, enc.encode(SENTENCES))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_paranmt_round_trip(saved, kind):
    d, expected = saved[kind]
    np.testing.assert_allclose(ParaNMTEncoder.from_pretrained(d).encode(SENTENCES), expected, atol=1e-6)
    files = set(os.listdir(d))
    assert {"config.json", "model.safetensors", "configuration_paranmt.py", "modeling_paranmt.py"} <= files
    config = json.load(open(os.path.join(d, "config.json")))
    assert config["model_type"] == "paranmt"
    assert config["auto_map"] == {
        "AutoConfig": "configuration_paranmt.ParaNMTConfig",
        "AutoModel": "modeling_paranmt.ParaNMTModel",
    }


@pytest.mark.parametrize("kind", KINDS)
def test_auto_classes_without_flags(saved, kind):
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    d, expected = saved[kind]
    config = AutoConfig.from_pretrained(d)
    model = AutoModel.from_pretrained(d).eval()
    tok = AutoTokenizer.from_pretrained(d)
    assert type(config).__name__ == "ParaNMTConfig" and type(model).__name__ == "ParaNMTModel"
    batch = tok(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch)
    np.testing.assert_allclose(out.pooler_output.numpy(), expected, atol=1e-5)
    states, mask = out.last_hidden_state, batch["attention_mask"]
    assert states.shape[:2] == mask.shape
    if kind in ("lstm", "bilstm", "gran"):  # a single recurrent encoder: its token states
        assert model.has_token_states
        return
    # no token states: every position holds the sentence embedding, so the AutoModel habits give it
    assert not model.has_token_states
    weights = mask.unsqueeze(-1).expand(states.size()).float()  # the mean_pooling of sentence-transformers' cards
    masked = ((states * weights).sum(1) / weights.sum(1).clamp(min=1e-9)).numpy()
    tokens = mask.sum(1).numpy() > 0  # (a sentence without tokens has no masked mean, whatever the model)
    np.testing.assert_allclose(masked[tokens], expected[tokens], atol=1e-5)
    for pooled in (states.mean(1), states[:, 0], out[0].max(1).values):
        np.testing.assert_allclose(pooled.numpy(), expected, atol=1e-5)


def _run(script: str, env_extra: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules"), **env_extra}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )


BLOCKER = """
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "paranmt_hf" or name.startswith("paranmt_hf."):
                raise ModuleNotFoundError("blocked: " + name)
    sys.meta_path.insert(0, Block())
"""


REMOTE_CODE_EMBED = BLOCKER + """
    import json, numpy as np, torch
    from transformers import AutoModel, AutoTokenizer
    try:
        import paranmt_hf
        raise SystemExit("paranmt_hf should not be importable here")
    except ModuleNotFoundError:
        pass
    jobs = json.load(open("jobs.json", encoding="utf-8"))
    for i, (directory, texts) in enumerate(jobs.values()):
        model = AutoModel.from_pretrained(directory, trust_remote_code=True).eval()
        tok = AutoTokenizer.from_pretrained(directory, trust_remote_code=True)
        assert model.__class__.__module__.startswith("transformers_modules"), model.__class__.__module__
        with torch.no_grad():
            np.save(f"{i}.npy", model(**tok(texts, padding=True, return_tensors="pt")).pooler_output.numpy())
    assert not any(m.startswith("paranmt_hf") for m in sys.modules)
    print("OK")
"""


def remote_code_embeddings(jobs: dict[str, tuple[str, list[str]]], tmp_path) -> dict[str, np.ndarray]:
    """``{name: embeddings}`` of each job's ``(directory, texts)`` by AutoModel + AutoTokenizer with remote code, in a
    fresh process where paranmt_hf cannot be imported."""
    (tmp_path / "jobs.json").write_text(json.dumps({k: [str(d), list(t)] for k, (d, t) in jobs.items()}))
    proc = _run(REMOTE_CODE_EMBED, {}, tmp_path)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr[-3000:]
    return {name: np.load(tmp_path / f"{i}.npy") for i, name in enumerate(jobs)}


def test_remote_code_in_fresh_process_without_paranmt_hf(saved, tmp_path):
    got = remote_code_embeddings({kind: (saved[kind][0], SENTENCES) for kind in KINDS}, tmp_path)
    for kind in KINDS:
        np.testing.assert_allclose(got[kind], saved[kind][1], atol=1e-5)


def test_registration_hook_when_paranmt_hf_is_imported_first(saved, tmp_path):
    d = saved["trigram+word"][0]
    script = f"""
    import sys
    import paranmt_hf
    assert "transformers" not in sys.modules and "torch" not in sys.modules, "import paranmt_hf must stay light"
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    m = AutoModel.from_pretrained({d!r})
    t = AutoTokenizer.from_pretrained({d!r})
    c = AutoConfig.from_pretrained({d!r})
    print(type(m).__module__, type(t).__name__, type(c).__name__)
    """
    proc = _run(script, {}, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "paranmt_hf.modeling.modeling_paranmt ParaNMTTokenizer ParaNMTConfig" in proc.stdout


def test_without_registration_or_flag_loading_custom_code_is_refused(saved, tmp_path):
    d = saved["word"][0]
    script = (
        BLOCKER
        + f"""
    from transformers import AutoModel
    try:
        AutoModel.from_pretrained({d!r}, trust_remote_code=False)
    except ValueError as err:
        print("REFUSED", "trust_remote_code" in str(err))
    """
    )
    proc = _run(script, {}, tmp_path)
    assert "REFUSED True" in proc.stdout, proc.stderr[-2000:]


def test_unknown_token_rules_survive_save_and_load(tmp_path):
    from paranmt_hf import ParaNMTConfig, ParaNMTModel

    torch.manual_seed(0)
    cfg = ParaNMTConfig(
        kind="sp", vocab_size=30, embedding_dim=4, drop_unknown_tokens=True, unknown_token_ids=[5, 6]
    )
    model = ParaNMTModel(cfg).eval()
    model.save_pretrained(tmp_path)
    reloaded = ParaNMTModel.from_pretrained(tmp_path).eval()
    ids = torch.tensor([[2, 5, 3, 1], [6, 1, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    expected = model(input_ids=ids, attention_mask=mask).pooler_output
    w = model.components[0].embedding.weight
    torch.testing.assert_close(expected[0], w[[2, 3]].mean(0))
    torch.testing.assert_close(expected[1], w[1])
    torch.testing.assert_close(reloaded(input_ids=ids, attention_mask=mask).pooler_output, expected)
