"""``--help`` answers without reading the source: every option has help, every preset is named and described on its
own, the papers' settings are the examples."""

from __future__ import annotations

import argparse

from paranmt_hf.cli.main import build_parser, main
from paranmt_hf.training.recipes import RECIPES

OWNED_ELSEWHERE = {"corpus"}  # the corpus tools' help is checked with the corpus tools


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_option_has_help():
    missing = [f"{' '.join(path)} {'/'.join(a.option_strings) or a.dest}"
               for path, parser in _parsers(build_parser()) if not set(path) & OWNED_ELSEWHERE
               for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
               and not (a.help or "").strip()]
    assert missing == []


def test_train_names_and_describes_every_recipe(capsys):
    commands = dict(_parsers(build_parser()))
    recipe_help = next(a.help for a in commands[("train",)]._actions if "--recipe" in a.option_strings)
    assert all(name in recipe_help.replace(",", " ").split() for name in RECIPES)
    assert main(["train", "--list-recipes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == list(RECIPES)
    descriptions = [line.split(": ", 1)[1] for line in lines]
    assert len(set(descriptions)) == len(descriptions)  # each preset its own description


def test_papers_settings_are_the_examples():
    commands = dict(_parsers(build_parser()))
    train = commands[("train",)].format_help()
    assert "--recipe acl2018-trigram" in train and "--recipe pras-sp" in train and "ParaNMT-50M §5.2" in train
    assert "--recipe pras-sp" in commands[("build",)].format_help()
    assert "convert pras model.para.lc.100.pt" in commands[("convert",)].format_help()
