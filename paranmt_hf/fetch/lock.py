"""The destination's record of what was downloaded: ``SOURCES.json`` (checksums, URLs, licences).

For every remote file it keeps the sha256 and size of the copy that was used, where it came from and how it was
checked: ``"pinned"`` (matched the registry's checksum) or ``"first-use"`` (the registry has none: the first
download that passed its format checks was recorded, and every later download of that file must match it).
For every source it keeps the licence, homepage, outputs and the remotes used.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..utils.atomic import RECORD_WAIT, atomic_write_json, output_lock
from .registry import Remote, Source

LOCK_NAME = "SOURCES.json"
VERIFY_MODES = ("tofu", "strict")


class UnpinnedError(ValueError):
    """``--verify strict`` and no checksum is known for a file (neither pinned nor recorded)."""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class SourceLock:
    """``SOURCES.json`` of one data directory."""

    path: Path
    remotes: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, dest: str | os.PathLike[str]) -> SourceLock:
        """Read ``<dest>/SOURCES.json`` (empty when absent).

        Raises:
            ValueError: the file exists but is not a record of this format (with the file name).
        """
        path = Path(dest) / LOCK_NAME
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(path, dict(data.get("remotes", {})), dict(data.get("sources", {})))
        except (ValueError, AttributeError) as err:
            raise ValueError(f"{path}: not a readable download record ({err}); move it away to start over") from err

    def expected(self, remote: Remote, verify: str = "tofu") -> str | None:
        """The sha256 a download of ``remote`` must have: pinned in the registry, else recorded on first use.

        Raises:
            UnpinnedError: ``verify="strict"`` and neither exists.
        """
        if verify not in VERIFY_MODES:
            raise ValueError(f"verify must be one of {VERIFY_MODES}, got {verify!r}")
        if remote.sha256:
            return remote.sha256
        recorded = self.remotes.get(remote.key, {}).get("sha256")
        if recorded is None and verify == "strict":
            raise UnpinnedError(
                f"{remote.key}: no checksum is pinned for it, and none was recorded in {self.path} by an earlier "
                "download; --verify strict accepts only known content (run once with --verify tofu to record it)"
            )
        return recorded

    def expected_size(self, remote: Remote) -> int | None:
        """The size a download of ``remote`` must have, if known."""
        return remote.size if remote.size is not None else self.remotes.get(remote.key, {}).get("size")

    def record(self, remote: Remote, sha256: str, size: int, url: str) -> None:
        """Record a download that passed its checks (``pinned`` when the registry's checksum matched)."""
        entry = self.remotes.get(remote.key, {})
        self.remotes[remote.key] = {
            "sha256": sha256, "size": size, "url": url,
            "checksum": "pinned" if remote.sha256 else "first-use",
            "recorded": entry.get("recorded") if entry.get("sha256") == sha256 else _now(),
        }

    def record_source(self, source: Source, remotes: list[str], extra: dict[str, Any] | None = None) -> None:
        """Record what built ``source``'s outputs (the remote keys actually used, licence, homepage)."""
        self.sources[source.name] = {
            "kind": source.kind, "description": source.description, "outputs": list(source.outputs),
            "remotes": remotes, "licence": source.licence, "homepage": source.homepage, "built": _now(),
            **(extra or {}),
        }

    def save(self) -> None:
        """Write the record atomically, merged with what another process recorded meanwhile (ours win)."""
        with output_lock(self.path, wait=RECORD_WAIT):
            on_disk = SourceLock.load(self.path.parent)
            self.remotes = {**on_disk.remotes, **self.remotes}
            self.sources = {**on_disk.sources, **self.sources}
            atomic_write_json(self.path, {"format": 1, "remotes": dict(sorted(self.remotes.items())),
                                          "sources": dict(sorted(self.sources.items()))})
