"""Long documents through every loader stay in bounded memory: no [batch, tokens, dim] tensor for averaging models."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from paranmt_hf import build_encoder

pytest.importorskip("sentence_transformers")

MEASURE = textwrap.dedent(
    """
    import json, sys
    import numpy as np, torch
    import paranmt_hf
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    def status(field):  # kB
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])

    words = "a man plays a guitar while the dog runs in the park and two women talk about coffee".split()
    rng = np.random.default_rng(0)
    docs = [" ".join(rng.choice(words, 25_000)) + " ." for _ in range(8)]  # 8 documents of ~100 KB
    assert all(len(d) > 100_000 for d in docs)
    results = {}
    for path in sys.argv[1:]:
        st = SentenceTransformer(path, device="cpu", trust_remote_code=True)
        tok, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
        st.encode(["warm up"])
        static = paranmt_hf.StaticEncoder.from_pretrained(path)
        static.encode(["warm up"])
        tok(["warm up"], padding=True, return_tensors="pt")

        def auto():
            with torch.inference_mode():
                return model(**tok(docs, padding=True, return_tensors="pt")).pooler_output.numpy()

        for loader, run in (("st", lambda: st.encode(docs, batch_size=8)), ("auto", auto),
                            ("static", lambda: static.encode(docs, batch_size=8))):
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset the peak resident set size (VmHWM) to the current one
            before = status("VmRSS")
            emb = run()
            results[f"{path}:{loader}"] = {"added_mb": (status("VmHWM") - before) / 1024,
                                           "rows": int(np.asarray(emb).shape[0])}
    print("RESULT " + json.dumps(results))
    """
)


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="peak-RSS reset needs Linux /proc")
def test_eight_100kb_documents_add_at_most_200mb(tmp_path):
    corpus = ["a man plays a guitar while the dog runs in the park", "two women talk about coffee ."] * 5
    paths = []
    for kind in ("trigram", "trigram+word"):
        paths.append(str(tmp_path / kind))
        build_encoder(kind, corpus=corpus, embedding_dim=300).save_pretrained(paths[-1])
    done = subprocess.run([sys.executable, "-c", MEASURE, *paths], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.rsplit("RESULT ", 1)[1])
    assert len(results) == 6
    for name, result in results.items():  # SentenceTransformer(dir).encode, AutoTokenizer + AutoModel, StaticEncoder
        assert result["rows"] == 8, name
        assert result["added_mb"] <= 200, (name, result)
