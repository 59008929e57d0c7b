"""Every BibTeX entry we publish parses: generated model cards, the README, model_meta.json's citation.

A strict reader of the BibTeX grammar (entries ``@type{key, field = {…} | "…" | number, …}``; braces balanced inside
a value; nothing left over) instead of a lenient library: ``title = {{ParaNMT-50M}}: …}`` must fail, as it closes the
entry early.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from paranmt_hf import build_encoder
from paranmt_hf.hub import render_model_card

ROOT = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"[A-Za-z][\w:-]*")


class BibTeXError(ValueError):
    pass


def _value(text: str, i: int) -> tuple[str, int]:
    if text[i] == "{":
        depth, j = 0, i
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return text[i + 1 : j], j + 1
            j += 1
        raise BibTeXError(f"unclosed brace at {i}")
    if text[i] == '"':
        j, depth = i + 1, 0
        while j < len(text) and not (text[j] == '"' and depth == 0):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth < 0:
                raise BibTeXError(f"unbalanced brace in a quoted value at {j}")
            j += 1
        if j == len(text):
            raise BibTeXError(f"unclosed quote at {i}")
        return text[i + 1 : j], j + 1
    match = re.compile(r"\d+").match(text, i)
    if not match:
        raise BibTeXError(f"no value at {i}: {text[i:i + 30]!r}")
    return match.group(), match.end()


def parse_bibtex(text: str) -> list[dict[str, str]]:
    """The entries of ``text`` (``ENTRYTYPE``, ``ID`` and the fields); BibTeXError on anything else."""
    entries, i = [], 0

    def skip(j: int) -> int:
        while j < len(text) and text[j].isspace():
            j += 1
        return j

    while (i := skip(i)) < len(text):
        kind = re.compile(r"@([A-Za-z]+)\s*\{\s*([^,\s}]+)\s*,").match(text, i)
        if not kind:
            raise BibTeXError(f"expected an entry at {i}: {text[i:i + 40]!r}")
        entry, i = {"ENTRYTYPE": kind.group(1).lower(), "ID": kind.group(2)}, kind.end()
        while True:
            i = skip(i)
            if i < len(text) and text[i] == "}":
                i += 1
                break
            name = _NAME.match(text, i)
            if not name:
                raise BibTeXError(f"expected a field name at {i}: {text[i:i + 40]!r}")
            i = skip(name.end())
            if i >= len(text) or text[i] != "=":
                raise BibTeXError(f"expected '=' after {name.group()!r}")
            value, i = _value(text, skip(i + 1))
            entry[name.group().lower()] = value
            i = skip(i)
            if i < len(text) and text[i] == ",":
                i += 1
            elif i >= len(text) or text[i] != "}":
                raise BibTeXError(f"expected ',' or '}}' after field {name.group()!r} at {i}: {text[i:i + 40]!r}")
        entries.append(entry)
    return entries


def bibtex_blocks(markdown: str) -> list[str]:
    return re.findall(r"```bibtex\n(.*?)```", markdown, re.S)


def test_the_checker_catches_an_entry_closed_early():
    with pytest.raises(BibTeXError):
        parse_bibtex("@inproceedings{a,\n  title = {{ParaNMT-50M}}: Pushing the Limits},\n  year = {2018}\n}")
    assert parse_bibtex("@inproceedings{a,\n  title = {{ParaNMT-50M}: Pushing},\n  year = 2018}")[0]["year"] == "2018"


def test_generated_model_card_bibtex_parses(tmp_path):
    card = render_model_card(_tiny(tmp_path / "model"), model_id="me/tiny").content
    (block,) = bibtex_blocks(card)
    entries = parse_bibtex(block)
    assert [e["ID"] for e in entries] == ["wieting-gimpel-2018-paranmt", "wieting-etal-2017-backtranslation",
                                          "wieting-etal-2021-paraphrastic"]
    assert entries[0]["title"].startswith("{ParaNMT-50M}: Pushing the Limits") and all("year" in e for e in entries)


def test_readme_and_model_meta_citations_parse():
    (block,) = bibtex_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(parse_bibtex(block)) == 3
    from paranmt_hf.evaluation.mteb_meta import PAPERS_CITATION

    assert len(parse_bibtex(PAPERS_CITATION)) == 2


def test_model_meta_names_this_projects_training_code(tmp_path, monkeypatch):
    pytest.importorskip("mteb")
    from paranmt_hf.evaluation.mteb_meta import build_model_meta, meta_to_dict
    from paranmt_hf.hub.model_info import training_code

    monkeypatch.setenv("PARANMT_HF_SOURCE_URL", "https://example.org/paranmt_hf.git")
    meta = meta_to_dict(build_model_meta("me/x", 8))
    assert meta["public_training_code"] == "https://example.org/paranmt_hf.git"  # not the authors' repository
    assert training_code(tmp_path) == "https://example.org/paranmt_hf.git"
    (tmp_path / "conversion_report.json").write_text(json.dumps({"source": "model.para.lc.100.pt"}))
    assert training_code(tmp_path) == "https://github.com/jwieting/paraphrastic-representations-at-scale"
    card = render_model_card(_tiny(tmp_path / "m"), model_id="me/tiny").content
    assert '# pip install "paranmt-hf @ git+https://example.org/paranmt_hf.git"' in card


def _tiny(path: Path) -> Path:
    build_encoder("word", corpus=["a man plays the guitar", "two dogs run"], embedding_dim=4).save_pretrained(path)
    return path
