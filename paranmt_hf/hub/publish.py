"""Make a Hub-ready folder of a model (and push it): ``paranmt-hf publish MODEL_DIR --output HUB_DIR``.

The folder holds exactly what every loader needs and nothing pickled: ``config.json`` (with ``auto_map``),
``model.safetensors`` and the remote-code files; the tokenizer files; the sentence-transformers files; the model
card (:mod:`paranmt_hf.hub.card`), ``training_summary.json`` without local paths, the evaluation JSON in mteb's
cache layout and ``speed.json``.

The model is re-saved from a fresh load, so checkpoints and stale files never leak into the folder, which is built
next to the target, checked, reloaded and compared with the source model before it is moved into place.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .card import default_model_id, render_model_card
from .checks import ST_FILES, check_hub_folder
from .eval_results import EvalSummary, check_results_model, load_eval_results
from .model_info import SUMMARY_FILE, public_training_summary, read_training_summary
from .speed import read_speed_json

logger = logging.getLogger(__name__)

PROBE_SENTENCES = ["A man is playing a guitar.", "someone plays guitar", "", "Ünïcödé, numbers 3.14 & UNKNOWNWORDZ"]


def check_repo_id(value: str, what: str = "model id") -> str:
    """``value`` if it is a Hub repository id (``name`` or ``owner/name``, as huggingface_hub validates them).

    It goes into the card's YAML and code snippets, and names folders: quotes, ``..`` and paths are refused.

    Raises:
        PublishError: it is not one (one sentence).
    """
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(value)
    except HFValidationError as err:
        reason = str(err).splitlines()[0].split(": '")[0].rstrip(".")  # without the value again, or the API's hints
        raise PublishError(f"{what} {value!r} is not a Hub repository id such as owner/name ({reason})") from None
    return value


class PublishError(RuntimeError):
    """The Hub folder could not be built, is incomplete, or could not be pushed."""


@dataclass
class Published:
    """What :func:`publish` produced: the folder, its files (relative paths) and the Hub URL when pushed."""

    folder: Path
    files: list[str] = field(default_factory=list)
    url: str | None = None


def _copy_st_files(source: Path, target: Path) -> None:
    """Copy the sentence-transformers files (when sentence-transformers is not installed to re-write them)."""
    for name in ST_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    if (source / "static").is_dir():
        shutil.copytree(source / "static", target / "static")


def _verify_reload(encoder: Any, folder: Path) -> None:
    import numpy as np

    from ..model.encoder import ParaNMTEncoder

    reloaded = ParaNMTEncoder.from_pretrained(folder)
    before, after = encoder.encode(PROBE_SENTENCES), reloaded.encode(PROBE_SENTENCES)
    if before.shape != after.shape or not np.allclose(before, after, atol=1e-6):
        raise PublishError(f"the published folder does not reproduce the model's embeddings ({folder})")


def _check_output(source: Path, output: Path, overwrite: bool, inputs: list[Any]) -> bool:
    """Refuse an output that is the model folder, contains it, or replaces an input; returns whether to replace it."""
    from ..utils.atomic import OutputIsInputError, check_output

    src, out = source.resolve(), output.resolve()
    if out == src or out in src.parents:
        raise PublishError(f"the output folder {output} must not be the model folder or contain it")
    try:
        check_output(output, inputs, overwrite=True)  # never replace --eval-dir / --speed, even with overwrite
    except OutputIsInputError as err:
        raise PublishError(str(err)) from err
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not overwrite:
        raise FileExistsError(f"{output} exists and is not empty: choose another folder, or replace it with "
                              "overwrite=True")
    return out.exists()


def _save_model(encoder: Any, source: Path, staging: Path) -> bool:
    """Re-save the model (HF + sentence-transformers files); returns whether the ST files are required."""
    from ..utils.imports import is_available

    st_installed = is_available("sentence_transformers")
    static = st_installed and (source / "static" / "modules.json").is_file()  # kept where the model has it
    encoder.save_pretrained(staging, sentence_transformers=st_installed, static=static)
    has_st = (source / "modules.json").is_file()
    if not st_installed and has_st:
        _copy_st_files(source, staging)
    return st_installed or has_st


def _write_records(
    source: Path, staging: Path, evaluation: EvalSummary | None, speed_json: str | os.PathLike[str] | None,
    model_id: str,
) -> tuple[dict[str, Any] | None, str | None]:
    """Write the public training summary, the evaluation JSON and the speed JSON; returns (summary, results path).

    The evaluation results are published under ``model_id`` (mteb's layout ``results/<org__name>/<revision>`` and
    ``model_meta.json``'s ``name``), whatever name ``paranmt-hf eval`` gave them, so that they match the card.
    """
    summary = read_training_summary(source)
    if summary is not None:
        (staging / SUMMARY_FILE).write_text(json.dumps(public_training_summary(summary), indent=2, default=str))
    results_path = None
    if evaluation is not None:
        relative = Path("results") / model_id.replace("/", "__") / evaluation.folder.name
        (staging / relative).mkdir(parents=True)
        for path in evaluation.files:  # links out of the evaluation folder are never followed
            shutil.copyfile(path, staging / relative / path.name)
        meta = staging / relative / "model_meta.json"
        if meta.is_file():
            value = json.loads(meta.read_text(encoding="utf-8"))
            if isinstance(value, dict) and value.get("name") != model_id:
                value["name"] = model_id
                meta.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
        results_path = relative.as_posix()
    if speed_json is not None:
        shutil.copy2(speed_json, staging / "speed.json")
    return summary, results_path


def publish(
    model_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    eval_dir: str | os.PathLike[str] | None = None,
    speed_json: str | os.PathLike[str] | None = None,
    push_repo_id: str | None = None,
    private: bool = False,
    token: str | None = None,
    *,
    model_id: str | None = None,
    language: str | list[str] | None = None,
    license: str = "mit",  # noqa: A002 - the card field's name
    datasets: list[str] | None = None,
    overwrite: bool = False,
) -> Published:
    """Build the Hub-ready folder of ``model_dir`` in ``output_dir`` and optionally push it.

    Args:
        model_dir: a saved (trained) model folder.
        output_dir: the folder to write (must be new or empty unless ``overwrite``).
        eval_dir: ``paranmt-hf eval --output`` results of this model (copied, and used for the card's numbers).
        speed_json: a speed benchmark JSON (copied as ``speed.json``, shown in the card).
        push_repo_id: Hub repository (``owner/name``) to create (if needed) and upload the folder to.
        private: create the repository as private.
        token: Hub token (default: the logged-in one).
        model_id: repository id shown in the card (default ``push_repo_id``, else ``paranmt-hf/<folder name>``).
        language: card language(s) (default ``en``).
        license: license of the weights (card metadata).
        datasets: Hub dataset ids of the training data (card metadata).
        overwrite: replace a non-empty ``output_dir``.

    Raises:
        FileNotFoundError: ``model_dir`` has no saved model, or ``eval_dir`` / ``speed_json`` do not exist.
        NotADirectoryError: ``eval_dir`` is a file.
        FileExistsError: ``output_dir`` is not empty and ``overwrite`` is false.
        PublishError: ``speed_json`` is no speed benchmark JSON, a required file is missing, the folder does not
            reproduce the model, or the push failed.
        EvalResultsError: ``eval_dir`` holds no usable results, or results of another model.
    """
    from ..model.encoder import ParaNMTEncoder

    source, output = Path(model_dir), Path(output_dir)
    if not (source / "config.json").is_file():
        raise FileNotFoundError(f"{source} holds no saved model (no config.json)")
    if push_repo_id is not None:
        check_repo_id(push_repo_id, "push_repo_id")
    if model_id is not None:
        check_repo_id(model_id, "model_id")
    if speed_json is not None:
        try:
            read_speed_json(speed_json)  # before any work: a file that is no speed JSON stops the command now
        except ValueError as err:
            raise PublishError(str(err)) from None
    evaluation = load_eval_results(eval_dir) if eval_dir is not None else None
    if evaluation is not None:
        check_results_model(evaluation, source)
    model_id = model_id or push_repo_id or default_model_id(source)
    if evaluation is not None and evaluation.model_name != model_id:  # eval's default name, or another one
        logger.info("the evaluation results are named %r: the published copy names them %r (mteb matches results "
                    "to models by name)", evaluation.model_name, model_id)
    encoder = ParaNMTEncoder.from_pretrained(source)
    inputs = [p for p in (eval_dir, speed_json) if p is not None]
    replace = _check_output(source, output, overwrite, inputs)
    from ..utils.atomic import atomic_output

    # built next to the target under a temporary name, with the output's lock held; moved into place when checked
    with atomic_output(output, inputs, overwrite=replace, directory=True) as staging:
        require_st = _save_model(encoder, source, staging)
        summary, results_path = _write_records(source, staging, evaluation, speed_json, model_id)
        card = render_model_card(
            staging, eval_dir=evaluation, speed_json=speed_json,
            model_id=model_id, encoder=encoder, training_summary=summary, language=language, license=license,
            datasets=datasets, results_path=results_path,
        )
        card.save(staging / "README.md")
        problems = check_hub_folder(staging, require_st=require_st, require_eval=evaluation is not None)
        if problems:
            raise PublishError(f"the Hub folder for {source} is incomplete: " + "; ".join(problems))
        _verify_reload(encoder, staging)
    files = sorted(p.relative_to(output).as_posix() for p in output.rglob("*") if p.is_file())
    logger.info("Hub folder written to %s (%d files)", output, len(files))
    published = Published(output, files)
    if push_repo_id is not None:
        published.url = push_folder(output, push_repo_id, private=private, token=token)
    return published


def push_folder(
    folder: str | os.PathLike[str], repo_id: str, private: bool = False, token: str | None = None,
    commit_message: str = "Upload ParaNMT model (paranmt-hf publish)",
) -> str:
    """Create the model repository ``repo_id`` if needed and upload ``folder``; returns the commit URL.

    Raises:
        PublishError: offline mode (``HF_HUB_OFFLINE``), or the Hub refused or could not be reached.
    """
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import OfflineModeIsEnabled

    hint = f"the folder {folder} is ready: upload it later with `hf upload {repo_id} {folder} .`"
    if constants.HF_HUB_OFFLINE:
        raise PublishError(f"cannot push to {repo_id}: HF_HUB_OFFLINE is set (offline mode); {hint}")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                                   commit_message=commit_message)
    except OfflineModeIsEnabled as err:
        raise PublishError(f"cannot push to {repo_id}: offline mode ({err}); {hint}") from err
    except Exception as err:  # HTTP errors, network errors (httpx / OSError), refused credentials
        raise PublishError(f"pushing to {repo_id} failed: {err}; {hint}") from err
    url = getattr(commit, "commit_url", None) or f"https://huggingface.co/{repo_id}"
    logger.info("pushed %s to %s", folder, url)
    return str(url)
