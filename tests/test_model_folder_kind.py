"""``ParaNMTEncoder.from_pretrained`` given a folder of another library says what it is and how to load it (instead
of transformers' load report and an OSError about a missing tokenizer_config.json)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paranmt_hf import ParaNMTEncoder, StaticEncoder, build_encoder
from paranmt_hf.cli.main import main
from paranmt_hf.model.folder_kind import NotAParaNMTFolderError

CORPUS = ["a man plays the guitar", "a woman slices an onion", "two dogs run in the park"]


@pytest.fixture(scope="module")
def paranmt_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "word"
    build_encoder("word", corpus=CORPUS, embedding_dim=4, seed=0).save_pretrained(path, static=True)  # + static/
    return path


def test_model2vec_folder(paranmt_dir, tmp_path):
    model2vec = pytest.importorskip("model2vec")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(paranmt_dir / "tokenizer.json"))
    folder = tmp_path / "m2v"
    model2vec.StaticModel(np.ones((tokenizer.get_vocab_size(), 4), dtype=np.float32), tokenizer).save_pretrained(
        str(folder))
    for loader in (ParaNMTEncoder, StaticEncoder):  # the torch-free loader gives the same hint
        with pytest.raises(NotAParaNMTFolderError) as err:
            loader.from_pretrained(folder)
        assert str(err.value).startswith(f"{folder} is a model2vec model, not a ParaNMT one: load it with "
                                         f"`model2vec.StaticModel.from_pretrained('{folder}')`")


def test_sentence_transformers_folders(paranmt_dir, tmp_path, capsys):
    st = pytest.importorskip("sentence_transformers")
    with pytest.raises(NotAParaNMTFolderError, match=r"is the sentence-transformers StaticEmbedding copy of the "
                       r"ParaNMT model in .*ParaNMTEncoder.from_pretrained\("):
        ParaNMTEncoder.from_pretrained(paranmt_dir / "static")
    plain = tmp_path / "plain-st"
    st.SentenceTransformer(str(paranmt_dir / "static"), device="cpu").save(str(plain))
    with pytest.raises(NotAParaNMTFolderError, match=r"is a sentence-transformers model, not a ParaNMT one: load it "
                       r"with `SentenceTransformer\("):
        ParaNMTEncoder.from_pretrained(plain)
    with pytest.raises(SystemExit) as err:  # the CLI: one line
        main(["export", str(plain), "--format", "fp16", "--output", str(tmp_path / "out")])
    assert err.value.code == 1 and "is a sentence-transformers model" in capsys.readouterr().err


def test_a_folder_of_no_known_library(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(NotAParaNMTFolderError, match="model_type 'bert'"):
        ParaNMTEncoder.from_pretrained(tmp_path)
