"""Publish the ``evaluate`` metric modules of :mod:`paranmt_hf.metrics` as Hub metrics (Spaces).

A Hub metric is a Gradio Space holding ``<name>.py`` (the ``evaluate.Metric``), the modules it imports, a
``README.md`` whose front matter tags it ``evaluate`` / ``metric``, ``app.py`` (evaluate's widget) and
``requirements.txt`` (the layout ``evaluate-cli create`` makes). Afterwards ``evaluate.load("<owner>/<name>")``
loads it from the Hub.

```python
from paranmt_hf.hub.metric_space import push_metric
push_metric("paranmt_sts", "my-org/paranmt_sts")           # needs a token (`hf auth login`) and the network
```
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..metrics import metric_path
from ..utils.atomic import atomic_output
from .publish import PublishError, check_repo_id

REQUIREMENTS = {"paranmt_sts": ["evaluate>=0.4", "datasets", "numpy", "scipy"],
                "paranmt_tatoeba": ["evaluate>=0.4", "datasets", "numpy"]}
APP = '''import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("{repo_id}")
launch_gradio_widget(module)
'''


def _front_matter(name: str, description: str) -> str:
    title = name.replace("_", " ").title().replace("Paranmt", "ParaNMT")
    return ("---\n"
            f"title: {title}\n"
            "tags:\n- evaluate\n- metric\n"
            f"description: {description!r}\n"
            "sdk: gradio\n"
            "app_file: app.py\n"
            "pinned: false\n"
            "---\n\n")


def write_metric_space(name: str, output: str | os.PathLike[str], repo_id: str | None = None,
                       overwrite: bool = False) -> Path:
    """Write the Space folder of metric ``name`` to ``output`` (atomically; an existing folder needs ``overwrite``).

    ``repo_id`` is the Space the widget loads (default ``paranmt-hf/<name>``). Name ``output`` after the metric to
    load the folder itself with ``evaluate.load(output)``.

    Raises:
        KeyError: unknown metric. OutputExistsError: ``output`` exists without ``overwrite``.
    """
    source = Path(metric_path(name))
    repo_id = repo_id or f"paranmt-hf/{name}"
    card = (source / "README.md").read_text(encoding="utf-8")
    first = next(line for line in card.splitlines()[1:] if line.strip())
    with atomic_output(output, overwrite=overwrite, directory=True) as tmp:
        for path in sorted(source.glob("*.py")):
            if path.name != "__init__.py":
                shutil.copy2(path, tmp / path.name)
        (tmp / "README.md").write_text(_front_matter(name, first.strip()) + card, encoding="utf-8")
        (tmp / "app.py").write_text(APP.format(repo_id=repo_id), encoding="utf-8")
        (tmp / "requirements.txt").write_text("\n".join(REQUIREMENTS[name]) + "\n", encoding="utf-8")
    return Path(output)


def push_metric(name: str, repo_id: str, token: str | None = None, private: bool = False,
                folder: str | os.PathLike[str] | None = None) -> str:
    """Create the Space ``repo_id`` (Gradio SDK) if needed and upload metric ``name``; returns the commit URL.

    ``folder`` keeps the built Space folder (default: a temporary one).

    Raises:
        PublishError: bad repository id, offline mode (``HF_HUB_OFFLINE``), or the Hub refused or was unreachable.
    """
    import tempfile

    from huggingface_hub import HfApi, constants

    check_repo_id(repo_id, "repo_id")
    if "/" not in repo_id:
        raise PublishError(f"repo_id {repo_id!r} is not a Hub repository id such as owner/name (no owner)")
    with tempfile.TemporaryDirectory() as tmp:
        space = write_metric_space(name, folder or Path(tmp) / name, repo_id=repo_id, overwrite=folder is not None)
        hint = f"upload it later with `hf upload {repo_id} <folder> . --repo-type space`"
        if constants.HF_HUB_OFFLINE:
            raise PublishError(f"cannot push the {name} metric to {repo_id}: HF_HUB_OFFLINE is set; {hint}")
        api = HfApi(token=token)
        try:
            api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
            commit = api.upload_folder(folder_path=str(space), repo_id=repo_id, repo_type="space",
                                       commit_message=f"Upload the {name} metric (paranmt-hf)")
        except Exception as err:  # HTTP errors, network errors, refused credentials
            raise PublishError(f"pushing the {name} metric to {repo_id} failed: {err}; {hint}") from err
    return str(getattr(commit, "commit_url", None) or f"https://huggingface.co/spaces/{repo_id}")
