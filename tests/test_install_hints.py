"""A missing extra's hint prints the pip command for the installation at hand: paranmt-hf is not on PyPI, so never
``pip install "paranmt-hf[...]"`` alone."""

from __future__ import annotations

from pathlib import Path

from paranmt_hf.utils.imports import command_for_source, install_command

ROOT = Path(__file__).resolve().parents[1]
REQUIRES = ['numpy>=1.24', 'torch>=2.2; extra == "train"', 'sentence-transformers>=6.0; extra == "train"',
            'datasets>=4.0; extra == "train"', 'datasets>=4.0; extra == "data"', 'scipy>=1.10 ; extra == "eval"']


def test_from_this_checkout_the_editable_install_of_it() -> None:
    assert install_command(["train"]) == f'pip install -e "{ROOT}[train]"'


def test_a_non_editable_install_of_a_local_folder_names_that_folder(tmp_path: Path) -> None:
    direct = {"url": tmp_path.as_uri(), "dir_info": {}}
    assert command_for_source(["train"], direct, REQUIRES) == f'pip install "{tmp_path}[train]"'
    direct["dir_info"]["editable"] = True
    assert command_for_source(["train", "eval"], direct, REQUIRES) == f'pip install -e "{tmp_path}[train,eval]"'


def test_git_and_archive_installs_name_their_url() -> None:
    git = {"url": "https://example.org/me/paranmt_hf.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}}
    assert command_for_source(["eval"], git, REQUIRES) == (
        'pip install "paranmt-hf[eval] @ git+https://example.org/me/paranmt_hf.git"')
    wheel = {"url": "file:///wheels/paranmt_hf-0.1.0-py3-none-any.whl", "archive_info": {}}
    assert command_for_source(["eval"], wheel, REQUIRES) == (
        'pip install "paranmt-hf[eval] @ file:///wheels/paranmt_hf-0.1.0-py3-none-any.whl"')


def test_without_a_known_source_the_extras_own_requirements(tmp_path: Path) -> None:
    gone = {"url": (tmp_path / "deleted-checkout").as_uri(), "dir_info": {}}  # built from a folder since removed
    for direct in ({}, gone):
        command = command_for_source(["train"], direct, REQUIRES)
        assert command == 'pip install "torch>=2.2" "sentence-transformers>=6.0" "datasets>=4.0"'
        assert "paranmt-hf" not in command
    assert command_for_source(["train"], {}, REQUIRES, "https://example.org/p.git") == (
        'pip install "paranmt-hf[train] @ git+https://example.org/p.git"')
    assert "paranmt-hf" not in command_for_source(["eval"], {}, [])  # no metadata at all: the extra's packages
