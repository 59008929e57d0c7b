"""One data layer: the builder configs are named once (the registry), bitext file names follow one rule."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.data.configs import CONFIG_NAMES, CONFIGS, ConfigOptions, bitext_sides, get_config
from paranmt_hf.training.data import PairSource


def test_every_layer_uses_the_registry() -> None:
    from paranmt_hf.cli import corpus as corpus_cli
    from paranmt_hf.dataset_scripts.paranmt import ParaNMT, ParaNMTBuilderConfig

    assert [c.name for c in ParaNMT.BUILDER_CONFIGS] == list(CONFIG_NAMES)
    parser = argparse.ArgumentParser()
    corpus_cli.add_parser(parser.add_subparsers())
    export = parser._subparsers._group_actions[0].choices["corpus"]._subparsers._group_actions[0].choices["export"]
    config_action = next(a for a in export._actions if a.dest == "config")
    assert tuple(config_action.choices) == CONFIG_NAMES
    for spec in CONFIGS.values():
        assert list(spec.features()) == spec.column_names
        assert spec.anchor in spec.column_names and spec.positive in spec.column_names
    # the builder's parameters are ConfigOptions (one list of options)
    assert set(ConfigOptions.names()) <= {f for f in ParaNMTBuilderConfig.__dataclass_fields__}
    with pytest.raises(ValueError, match="choose one of"):
        get_config("nope")


def test_builder_config_is_not_called_like_the_model_config() -> None:
    import paranmt_hf
    from paranmt_hf.dataset_scripts import paranmt as builder

    assert not hasattr(builder, "ParaNMTConfig")  # one name, one meaning: ParaNMTConfig is the model's config
    assert paranmt_hf.ParaNMTConfig.model_type == "paranmt"
    assert builder.ParaNMTBuilderConfig.__name__ == "ParaNMTBuilderConfig"


@pytest.mark.parametrize(("name", "sides"), [
    ("tatoeba-en-es.tsv.gz", (True, "es")), ("tatoeba_en_es.tsv", (True, "es")), ("de-en.txt", (False, "de")),
    ("multi30k_cs_en.tsv", (False, "cs")), ("EN-FR.tsv", (True, "fr")), ("corpus.en-zho.tsv", (True, "zho")),
    ("flickr30k-caption-pairs.tsv.gz", None), ("queen-es.tsv", None), ("open-source.tsv", None),
    ("pairs.tsv", None),
])
def test_one_bitext_name_rule_for_builder_and_training(tmp_path: Path, name: str, sides: tuple | None) -> None:
    assert bitext_sides(name) == sides
    path = tmp_path / name
    path.write_text("Go.\tVete.\n" if sides is None or sides[0] else "Vete.\tGo.\n")
    assert PairSource.parse(str(path)).config == ("pairs" if sides is None else "bitext")
    if sides is not None:
        row = next(iter(load_paranmt("bitext", str(path))))
        assert row == {"english": "Go.", "foreign": "Vete.", "lang": sides[1]}
