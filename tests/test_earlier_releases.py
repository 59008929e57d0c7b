"""Model directories saved by earlier releases keep loading, with the embeddings they gave, in every loader."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from paranmt_hf import ParaNMTEncoder

FIXTURES = Path(__file__).parent / "fixtures" / "releases"
TEXTS = ["a man plays a guitar .", "a cat runs .", ""]
MODELS = sorted(p.name.removesuffix(".tar.gz") for p in FIXTURES.glob("*.tar.gz"))


def unpack(name: str, folder: Path) -> Path:
    """The saved directory ``name`` as the release wrote it (kept as an archive: frozen files, not this project's
    code, so that linters, the duplicates tool and editors leave the old remote code alone)."""
    folder.mkdir(parents=True)
    # the "data" extraction filter where this Python has it (3.12, and 3.10.12 / 3.11.4 onwards); the archives are
    # this repository's own fixtures either way
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(FIXTURES / f"{name}.tar.gz") as archive:
        archive.extractall(folder, **safe)
    return folder


def test_the_fixtures_cover_both_earlier_layouts():
    assert {m.split("-", 1)[0] for m in MODELS} == {"161fee2", "907b5cc"}
    assert MODELS == ["161fee2-trigram-word", "161fee2-word", "907b5cc-trigram-word", "907b5cc-word"]


@pytest.fixture(params=MODELS)
def release(request, tmp_path):
    """A copy of one saved directory (loaders may write caches next to it) and the embeddings it gave.

    The oldest layout names the encoder kind ``encoder`` in config.json: the loaders' one rename rule
    (``renamed_fields``) reads it as ``kind``, silently (the suite turns paranmt_hf's own warnings into errors).
    """
    folder = unpack(request.param, tmp_path / request.param)
    if request.param.startswith("161fee2"):
        assert '"encoder": "' in (folder / "config.json").read_text()
    return folder, np.load(FIXTURES / f"{request.param}-expected.npy")


def test_paranmt_encoder(release):
    folder, expected = release
    np.testing.assert_allclose(ParaNMTEncoder.from_pretrained(folder).encode(TEXTS), expected, rtol=0, atol=1e-6)


def test_automodel_and_autotokenizer(release):
    from transformers import AutoModel, AutoTokenizer

    folder, expected = release
    model, tok = AutoModel.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        got = model(**tok(TEXTS, padding=True, return_tensors="pt")).pooler_output.numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_sentence_transformers(release):
    from sentence_transformers import SentenceTransformer

    folder, expected = release
    got = SentenceTransformer(str(folder), device="cpu", trust_remote_code=True).encode(TEXTS)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_static_encoder(release):
    from paranmt_hf import StaticEncoder

    folder, expected = release
    np.testing.assert_allclose(StaticEncoder.from_pretrained(folder).encode(TEXTS), expected, rtol=0, atol=1e-6)


def test_the_oldest_layout_is_read_by_one_rule_and_saving_updates_it(tmp_path):
    from transformers import AutoConfig

    from paranmt_hf import ParaNMTConfig
    from paranmt_hf.modeling.kinds_paranmt import renamed_fields

    folder = unpack("161fee2-trigram-word", tmp_path / "old")
    assert AutoConfig.from_pretrained(folder).kind == "trigram+word"
    assert renamed_fields({"components": [{"encoder": "word"}, {"kind": "sp"}]}) == {
        "components": [{"kind": "word"}, {"kind": "sp"}]}
    with pytest.raises(TypeError, match="no field 'encoder'"):  # a loader rule, not a second name for Python callers
        ParaNMTConfig(encoder="word")
    encoder = ParaNMTEncoder.from_pretrained(folder)
    encoder.save_pretrained(tmp_path / "new")
    config = (tmp_path / "new" / "config.json").read_text()
    assert '"encoder"' not in config and '"kind": "trigram"' in config
    np.testing.assert_allclose(ParaNMTEncoder.from_pretrained(tmp_path / "new").encode(TEXTS),
                               np.load(FIXTURES / "161fee2-trigram-word-expected.npy"), rtol=0, atol=1e-6)
