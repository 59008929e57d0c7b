"""docs/corpus.md's ways to reach the corpus with stock `datasets` work as written: the exported
Hub-style folder through `datasets.load_dataset(folder, config, streaming=True)`, and the raw para-nmt-50m.txt
through the builder class, `ParaNMT(config_name=..., paths=...).as_streaming_dataset(split="train")`."""

from __future__ import annotations

import gc
import re
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.cli.main import main

README = Path(__file__).resolve().parents[1] / "docs" / "corpus.md"
LINES = ("I do not think we should go to the party tonight.\tI don't believe we ought to attend the party this "
         "evening.\t0.81\nHe told me that he would be here at noon.\tHe said he'd be here at twelve o'clock.\t0.77\n"
         "yes .\tyeah .\t0.9\n")


def test_readme_shows_the_calls_and_they_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    text = README.read_text(encoding="utf-8")
    calls = ['load_dataset("paranmt-hub/", "filtered", streaming=True)["train"]',
             'ParaNMT(config_name="full", paths="para-nmt-50m.txt").as_streaming_dataset(split="train")',
             'ParaNMT(config_name="filtered", paths="para-nmt-50m.zip", sim_low=0.7)'
             '.as_streaming_dataset(split="train")',
             "from paranmt_hf.dataset_scripts.paranmt import ParaNMT", "from datasets import load_dataset"]
    for call in calls:
        assert call in text, call
    assert re.search(r"corpus export para-nmt-50m\.zip --config full --config filtered -o paranmt-hub/", text)
    monkeypatch.chdir(tmp_path)
    Path("para-nmt-50m.txt").write_text(LINES, encoding="utf-8")
    import zipfile

    with zipfile.ZipFile("para-nmt-50m.zip", "w") as archive:
        archive.writestr("para-nmt-50m/para-nmt-50m.txt", LINES)
    assert main(["corpus", "export", "para-nmt-50m.zip", "--config", "full", "--config", "filtered", "-o",
                 "paranmt-hub/", "--quiet", "--no-language-filter"]) == 0
    from datasets import load_dataset  # noqa: F401 (as docs/corpus.md imports them)

    from paranmt_hf.dataset_scripts.paranmt import ParaNMT  # noqa: F401

    namespace = {"load_dataset": load_dataset, "ParaNMT": ParaNMT}
    filtered = list(eval(calls[0], namespace))  # noqa: S307 (the page's own line)
    assert filtered and set(filtered[0]) == {"reference", "paraphrase", "paraphrase_score", "trigram_overlap",
                                             "reference_length", "paraphrase_length"}
    full = list(eval(calls[1], namespace))  # noqa: S307
    assert full == list(load_paranmt("full", "para-nmt-50m.txt"))
    high = list(eval(calls[2], namespace))  # noqa: S307
    assert [r["paraphrase_score"] for r in high] == pytest.approx([0.81, 0.77], abs=1e-6)
    namespace.clear()
    gc.collect()  # datasets#7566: streams still open at interpreter exit can abort it (pyarrow scanner threads)
