"""Model cards: rendered from hub_cards/model_card.md, parsed back by huggingface_hub, numbers from the eval JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from huggingface_hub import ModelCard

from paranmt_hf import build_encoder
from paranmt_hf.data.sts import STS_YEARS
from paranmt_hf.evaluation import evaluate, write_results
from paranmt_hf.evaluation.runner import TaskResult
from paranmt_hf.hub import render_model_card
from paranmt_hf.hub.eval_results import EvalResultsError, find_results_folder, load_eval_results
from paranmt_hf.hub.model_info import public_training_summary
from paranmt_hf.training.recipes import get_recipe

CORPUS = [
    "a man plays the guitar .", "someone is playing a guitar .", "a dog runs in the park .",
    "the cat sleeps on the sofa .", "a woman is slicing an onion .", "two men are playing football .",
    "the children play in the snow .", "a bird flies over the lake .",
]
MODEL_ID = "me/tiny-word"


def write_fake_sts(root: Path) -> None:
    """A tiny copy of the SemEval 2012-2016 and STS-B layout (eval/sts/...), 6 scored pairs per dataset."""
    rng = np.random.default_rng(0)
    for folder, datasets in STS_YEARS.values():
        base = root / "eval" / "sts" / folder
        base.mkdir(parents=True)
        for ds in datasets:
            pairs = [(CORPUS[i], CORPUS[j]) for i, j in rng.integers(0, len(CORPUS), size=(6, 2))]
            (base / f"STS.input.{ds}.txt").write_text("".join(f"{a}\t{b}\n" for a, b in pairs))
            (base / f"STS.gs.{ds}.txt").write_text("".join(f"{s:.1f}\n" for s in rng.uniform(0, 5, 6)))
    stsb = root / "eval" / "sts" / "STSBenchmark"
    stsb.mkdir(parents=True)
    for name in ("sts-dev.csv", "sts-test.csv"):
        rows = [f"main-news\tnews\t2012\t{i:04d}\t{rng.uniform(0, 5):.1f}\t{CORPUS[i]}\t{CORPUS[-1 - i]}\n"
                for i in range(6)]
        (stsb / name).write_text("".join(rows))


def bitext_result() -> TaskResult:
    scores = {"test": [{"error_xx2en": 12.5, "error_en2xx": 10.0, "error": 11.25, "accuracy": 0.8875,
                        "xx2en_precision": 0.8125, "xx2en_recall": 0.875, "xx2en_f1": 0.833333,
                        "xx2en_accuracy": 0.875, "main_score": 0.833333, "n_pairs": 8, "hf_subset": "fra-eng",
                        "languages": ["fra-Latn", "eng-Latn"]}]}
    return TaskResult("Tatoeba", "bitext", scores, 0.1)


@pytest.fixture(scope="module")
def word_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("word")
    build_encoder("word", corpus=CORPUS, embedding_dim=8).save_pretrained(directory, static=True)
    return directory


@pytest.fixture(scope="module")
def eval_dir(word_dir, tmp_path_factory):
    """Results of the real evaluation code on tiny STS data, in mteb's layout, plus a Tatoeba result."""
    from paranmt_hf import ParaNMTEncoder

    data = tmp_path_factory.mktemp("data")
    write_fake_sts(data)
    results = evaluate(ParaNMTEncoder.from_pretrained(word_dir), ["sts12-16", "STSBenchmark"], data_dir=data)
    results["Tatoeba"] = bitext_result()
    out = tmp_path_factory.mktemp("eval")
    write_results(results, out, MODEL_ID, "v1", {"name": MODEL_ID, "revision": "v1"})
    return out


@pytest.fixture(scope="module")
def card_path(word_dir, eval_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("card") / "README.md"
    render_model_card(word_dir, eval_dir, model_id=MODEL_ID).save(path)
    return path


def task_json(eval_dir: Path, task: str) -> dict:
    """The task JSON with ``scores`` = our complete scores (the file's ``paranmt_hf`` key)."""
    data = json.loads((eval_dir / "me__tiny-word" / "v1" / f"{task}.json").read_text())
    return data | {"scores": data["paranmt_hf"]["scores"]}


def metric(card: ModelCard, dataset_type: str, config: str, metric_type: str, split: str = "test") -> float:
    found = [r.metric_value for r in card.data.eval_results if (r.dataset_type, r.dataset_config, r.metric_type,
             r.dataset_split) == (dataset_type, config, metric_type, split)]
    assert len(found) == 1, (dataset_type, config, metric_type, found)
    return found[0]


def test_card_metadata_parses(card_path):
    card = ModelCard.load(card_path)
    data = card.data
    assert data.library_name == "sentence-transformers" and data.pipeline_tag == "sentence-similarity"
    assert data.language == ["en"] and data.license == "mit" and data.model_name == MODEL_ID
    assert {"paranmt", "sentence-similarity", "static-embeddings", "word-encoder", "mteb"} <= set(data.tags)


def test_model_index_numbers_come_from_the_json(card_path, eval_dir):
    card = ModelCard.load(card_path)
    for year in ("STS12", "STS13", "STS14", "STS15", "STS16"):
        default = next(e for e in task_json(eval_dir, year)["scores"]["test"] if e["hf_subset"] == "default")
        dataset = f"mteb/{year.lower()}-sts"
        assert metric(card, dataset, "default", "cosine_spearman") == round(100 * default["cosine_spearman"], 4)
        assert metric(card, dataset, "default", "pearsonr") == round(100 * default["paper_pearson_mean"], 4)
    stsb = task_json(eval_dir, "STSBenchmark")["scores"]["test"][0]
    assert metric(card, "mteb/stsbenchmark-sts", "default", "cosine_spearman") == round(100 * stsb["main_score"], 4)
    assert metric(card, "mteb/stsbenchmark-sts", "default", "pearsonr") == round(100 * stsb["paper_pearson"], 4)
    assert metric(card, "mteb/tatoeba-bitext-mining", "fra-eng", "accuracy") == 88.75
    assert metric(card, "mteb/tatoeba-bitext-mining", "fra-eng", "f1") == 83.3333
    # validation splits and the per-dataset subsets of the paper years stay out of model-index
    assert {r.dataset_split for r in card.data.eval_results} == {"test"}
    assert not [r for r in card.data.eval_results if r.dataset_config == "MSRpar"]


def test_evaluation_table_and_average(card_path, eval_dir):
    text = card_path.read_text()
    pearsons = []
    for year in ("STS12", "STS13", "STS14", "STS15", "STS16"):
        default = next(e for e in task_json(eval_dir, year)["scores"]["test"] if e["hf_subset"] == "default")
        pearsons.append(100 * default["paper_pearson_mean"])
        row = f"| {year} | {100 * default['paper_pearson_mean']:.2f} | {100 * default['cosine_spearman']:.2f} |"
        assert row in text
    assert f"| **Average** | **{np.mean(pearsons):.2f}** |" in text
    assert "| STS12 | MSRpar |" in text and "| Tatoeba | fra-eng | 12.5 | 10.0 |" in text
    assert "[`results/me__tiny-word/v1`]" not in text  # no results_path given here


def test_usage_citation_and_limitations(card_path):
    text = card_path.read_text()
    assert f'ParaNMTEncoder.from_pretrained("{MODEL_ID}")' in text
    assert f'AutoModel.from_pretrained("{MODEL_ID}", trust_remote_code=True)' in text
    assert f'AutoTokenizer.from_pretrained("{MODEL_ID}")\n' in text  # word tokenizer: tokenizer.json, no code
    assert f'SentenceTransformer("{MODEL_ID}", trust_remote_code=True)' in text
    assert f'StaticEmbedding.load("{MODEL_ID}", subfolder="static")' in text
    assert "mteb.evaluate(model, tasks)" in text
    for key in ("wieting-gimpel-2018-paranmt", "wieting-etal-2017-backtranslation", "wieting-etal-2021-paraphrastic"):
        assert f"{{{key}," in text
    assert "title = {{ParaNMT-50M}: Pushing the Limits" in text  # one brace pair around the name only
    assert "English only" in text and "lower-cased" in text and "word order is ignored" in text
    assert "No training record" in text
    assert "\n\n\n" not in text


def test_sentence_transformers_usage_names_the_input_module(card_path, tmp_path):
    """With ``modules.json`` the card names the folder's input module; without, its snippet wraps the model in
    ``ParaNMTInputModule`` (not the deprecated ``ParaNMTSentenceEncoder``) and runs."""
    assert "input_module_paranmt.ParaNMTInputModule" in card_path.read_text()
    plain = tmp_path / "plain"
    encoder = build_encoder("word", corpus=CORPUS, embedding_dim=8)
    encoder.save_pretrained(plain, sentence_transformers=False)
    text = render_model_card(plain, model_id=str(plain)).content
    assert "ParaNMTSentenceEncoder" not in text
    (snippet,) = [block for block in re.findall(r"```python\n(.*?)```", text, flags=re.S)
                  if "ParaNMTInputModule" in block]
    namespace: dict = {}
    exec(snippet, namespace)  # the card's own code, on the local folder
    np.testing.assert_allclose(namespace["model"].encode(CORPUS), encoder.encode(CORPUS), rtol=0, atol=1e-6)


def test_trigram_and_lstm_cards(tmp_path):
    trigram = tmp_path / "trigram"
    build_encoder("trigram", corpus=CORPUS, embedding_dim=8).save_pretrained(trigram)
    text = render_model_card(trigram, model_id="me/tri").content
    assert 'AutoTokenizer.from_pretrained("me/tri", trust_remote_code=True)' in text
    assert "StaticEmbedding.load" not in text and "character-trigram averaging" in text
    assert "custom code" in text and "No evaluation results" in text
    assert "static-embeddings" in ModelCard(text).data.tags
    lstm = tmp_path / "lstm"
    build_encoder("lstm", corpus=CORPUS, embedding_dim=8).save_pretrained(lstm)
    card = render_model_card(lstm, model_id="me/lstm")
    assert "static-embeddings" not in card.data.tags and "Recurrent model" in card.content
    assert card.data.eval_results is None


def test_training_and_speed_sections(word_dir, tmp_path):
    summary = {
        "recipe": get_recipe("acl2018-word").to_dict(),
        "sources": ["PairSource(config='pairs', files=('/secret/home/paranmt-5m.tsv.gz',), options=())",
                    "bitext:/secret/en-fr.tsv.gz", "processed-5m:/secret/paranmt5m-sample-10k.tsv.gz@10"],
        "seed": 3, "output_dir": "/secret/out", "steps": 1200, "seconds": 7200.0, "train_pairs": 50000,
        "world_size": 1, "dev_scores": [{"eval_sts17_spearman": 0.7123456}],
    }
    speed = tmp_path / "speed.json"
    speed.write_text(json.dumps({"cpu": "2 cores", "threads": 1, "results": [
        {"kind": "word", "sentences_per_second": 123456.7, "batch_size": 8192},
        {"kind": "sp", "sentences_per_second": 50000.0, "batch_size": 8192}]}))
    text = render_model_card(word_dir, model_id=MODEL_ID, training_summary=summary, speed_json=speed).content
    assert "Recipe `acl2018-word`" in text and "`paranmt-5m.tsv.gz`" in text and "`en-fr.tsv.gz`" in text
    assert "/secret" not in text
    assert "`paranmt5m-sample-10k.tsv.gz` (repeated 10× per epoch)" in text
    assert public_training_summary(summary)["sources"][-1] == "processed-5m:paranmt5m-sample-10k.tsv.gz@10"
    assert "50,000 pairs" in text and "1,200 optimizer steps" in text and "in 2.0 h" in text
    assert "eval_sts17_spearman` = 0.7123" in text
    assert "English only" not in text  # bitext source: not claimed English-only
    assert "cpu = 2 cores" in text and "| word | 123,456.7 | 8,192 |" in text and "| sp |" not in text


def test_speed_section_of_the_benchmark_layout(word_dir, tmp_path):
    """benchmarks/speed/benchmark.py's shape: settings with results keyed by encoder name, peers, targets."""
    def row(group, best):
        return {"group": group, "sentences": 100, "seconds": [0.1], "best_sent_per_s": best}

    speed = tmp_path / "speed.json"
    speed.write_text(json.dumps({
        "date": "2026-11-22", "environment": {"cpu": "EPYC", "cores_available": 2},
        "one_core": {"cores": 1, "results": {"model2vec": row("peer", 1000.0), "paranmt word": row("word", 2500.0),
                                             "paranmt sp": row("sp", 2000.0)}},
        "targets": ["SP >= 1.5x model2vec: met", "WORD >= 1.5x model2vec: met"]}))
    text = render_model_card(word_dir, model_id=MODEL_ID, speed_json=speed).content
    section = text[text.index("## Speed"):text.index("## Limitations")]
    assert "- environment: cpu = EPYC, cores_available = 2" in section and "**one_core** (cores = 1)" in section
    assert "| model2vec | peer | 100 | 1,000.0 |" in section and "| paranmt word | word | 100 | 2,500.0 |" in section
    assert "paranmt sp" not in section and "seconds" not in section
    assert "- WORD >= 1.5x model2vec: met" in section and "SP >=" not in section


def test_eval_dir_errors(tmp_path, eval_dir):
    with pytest.raises(FileNotFoundError):
        find_results_folder(tmp_path / "missing")
    with pytest.raises(EvalResultsError, match="no mteb-layout"):
        find_results_folder(tmp_path)
    # any level of the layout works
    assert load_eval_results(eval_dir / "me__tiny-word" / "v1").model_name == MODEL_ID
    assert load_eval_results(eval_dir).revision == "v1"
    other = tmp_path / "two"
    for name in ("a__x", "b__y"):
        (other / name / "v1").mkdir(parents=True)
        (other / name / "v1" / "STS12.json").write_text(json.dumps({"task_name": "STS12", "scores": {}}))
    with pytest.raises(EvalResultsError, match=re.escape("several models")):
        find_results_folder(other)


def test_bitext_model_card_names_its_languages(word_dir, eval_dir):
    summary = {
        "recipe": get_recipe("pras-bitext").to_dict(),
        "sources": ["bitext:/data/tatoeba-en-es.tsv.gz",
                    "bitext:/data/tatoeba-en-fr.tsv.gz,/data/multi30k-en-de.tsv.gz",
                    "bitext:/data/multi30k-en-fr.tsv.gz@2", "pairs:/data/flickr30k-caption-pairs.tsv.gz",
                    "pairs:/data/es-en.pivots.tsv.gz"],  # a paraphrase source: its name is no language
        "seed": 0, "steps": 10, "seconds": 1.0, "train_pairs": 100, "world_size": 1,
    }
    card = render_model_card(word_dir, eval_dir, model_id=MODEL_ID, training_summary=summary)
    assert card.data.language == ["en", "es", "fr", "de"]
    text = card.content
    assert "| Languages | English, Spanish, French, German (English paraphrases and English-X bitext" in text
    assert "Trained for English, Spanish, French, German only" in text and "English only" not in text
    assert "| Tatoeba | fra-eng | 12.5 | 10.0 | yes |" in text  # fra: trained for
    assert "Tatoeba mining is in-domain" in text
    summary["sources"] = summary["sources"][:1]
    text = render_model_card(word_dir, eval_dir, model_id=MODEL_ID, training_summary=summary).content
    assert "| Tatoeba | fra-eng | 12.5 | 10.0 | no |" in text
    summary["sources"] = ["bitext:/data/multi30k-en-de.tsv.gz"]
    assert "in-domain" not in render_model_card(word_dir, model_id=MODEL_ID, training_summary=summary).content
    summary["sources"] = ["bitext:/data/tatoeba-en-es.tsv.gz"]
    explicit = render_model_card(word_dir, eval_dir, model_id=MODEL_ID, training_summary=summary,
                                 language=["en", "fr"])
    assert explicit.data.language == ["en", "fr"] and "| Tatoeba | fra-eng | 12.5 | 10.0 | yes |" in explicit.content


def test_english_card_language_default(card_path):
    text = card_path.read_text()
    assert "| Languages | English |" in text and "| Tatoeba | fra-eng | 12.5 | 10.0 | no |" in text
