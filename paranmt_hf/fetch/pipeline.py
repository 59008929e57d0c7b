"""Build the data layout from public sources: ``paranmt-hf data fetch`` (see :func:`fetch_data`).

Layout written below the destination (the same as the project's shared data)::

    eval/sts/STS12-en-test ... STS16-en-test, eval/sts/STSBenchmark, eval/sts/STS17, eval/tatoeba, eval/simlex
    train/flickr30k-caption-pairs.tsv.gz, train/paranmt5m-sample-10k.tsv.gz,
    train/bitext/tatoeba-en-{es,fr,de}.tsv.gz, train/bitext/multi30k-en-{de,fr,cs}.tsv.gz, train/STATS.json
    SOURCES.json       what was downloaded (URL, size, sha256, how it was verified) and each source's licence
    CHECKSUMS.sha256   sha256 of every file under eval/ and train/ as fetch built it (``sha256sum -c``)
    .downloads/        the raw downloads (kept for resuming and re-building; safe to delete afterwards)

Outputs matching the checksums recorded when they were built are kept unless ``overwrite``; one that fails them is
rebuilt from the verified downloads (``CHECKSUMS.sha256`` is never recomputed from what is on disk). Every output is
written under a temporary name, with its lock held, and renamed into place when complete and checked.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import logging
import os
import shutil
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..data.reader import read_text_lines
from ..utils.atomic import (
    RECORD_WAIT,
    TEMP_PREFIX,
    atomic_output,
    atomic_write_json,
    atomic_write_text,
    output_lock,
    temp_sibling,
)
from ..utils.content_hash import file_sha256, sha256_file
from . import registry
from .archives import ArchiveError
from .decontaminate import CleanStats, clean_pairs, eval_sentences, sick_sentences
from .http import ChecksumError, Downloaded, Downloader, DownloadError, UnreachableError
from .installers import INSTALLERS
from .lock import VERIFY_MODES, SourceLock, UnpinnedError
from .registry import Remote, Source
from .train_sets import anki_pairs, flickr_ring_pairs, parallel_pairs, sampled_pairs

logger = logging.getLogger(__name__)
T = TypeVar("T")

DOWNLOADS = ".downloads"
CHECKSUMS_NAME = "CHECKSUMS.sha256"
STATS_PATH = "train/STATS.json"
ONLY = ("eval", "train")
PARANMT_SAMPLE = 10_000
MIRROR_ENV = "PARANMT_HF_MIRROR"


class SourceFormatError(DownloadError):
    """A download is complete but is not what the source should hold (layout or format changed)."""


class FetchFailed(DownloadError):
    """Some sources failed (the others were installed); ``failures`` maps source names to their errors."""

    def __init__(self, failures: dict[str, Exception]) -> None:
        self.failures = failures
        lines = "; ".join(f"{name}: {err}" for name, err in failures.items())
        super().__init__(f"{len(failures)} source(s) failed, the rest is in place: {lines}. Fix them (a copy "
                         "downloaded by hand can be given with --file KEY=PATH, keys in `paranmt-hf data sources`) "
                         "and run `paranmt-hf data fetch` again: it resumes where it stopped")


@dataclass
class FetchReport:
    """What a fetch did: outputs built and kept, training statistics, and the destination."""

    dest: Path
    built: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)


def paranmt_sample_output(n: int) -> str:
    """The sample's file name: ``train/paranmt5m-sample-10k.tsv.gz`` for 10,000 lines."""
    size = f"{n // 1000}k" if n % 1000 == 0 else str(n)
    return f"train/paranmt5m-sample-{size}.tsv.gz"


def write_pairs_gz(pairs: Iterable[tuple[str, str]], path: Path) -> int:
    r"""``a \t b`` lines, gzip'd reproducibly (no name or time in the header); returns the count."""
    count = 0
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
        for chunk in _batched(pairs, 8192):
            gz.write("".join(f"{a}\t{b}\n" for a, b in chunk).encode("utf-8"))
            count += len(chunk)
    return count


def _batched(items: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


@contextlib.contextmanager
def staged_folder(target: Path, overwrite: bool) -> Iterator[Path]:
    """A new empty folder named like ``target`` inside a hidden temporary folder; moved onto ``target`` on success.

    The folder keeps its final name while it is built (the installers' readers check it by name); the output's lock
    is held meanwhile (:func:`paranmt_hf.utils.atomic.atomic_output`).
    """
    with atomic_output(target, overwrite=overwrite, directory=True) as holder:
        staging = holder / target.name
        staging.mkdir()
        yield staging
        ready = temp_sibling(target)  # the built folder becomes the temporary output itself
        os.replace(staging, ready)
        holder.rmdir()
        os.replace(ready, holder)


def data_files(dest: Path) -> list[Path]:
    """Every data file under ``dest/eval`` and ``dest/train`` (temporary files excluded), sorted."""
    files = [p for sub in ("eval", "train") for p in (dest / sub).rglob("*") if p.is_file()]
    return sorted(p for p in files if not any(part.startswith(TEMP_PREFIX) for part in p.relative_to(dest).parts))


def read_checksums(dest: str | os.PathLike[str]) -> dict[str, str]:
    """``CHECKSUMS.sha256`` of ``dest`` as ``{relative path: sha256}`` (empty when there is none).

    Raises:
        ValueError: a line is not ``<sha256>  <path>`` (file and line named).
    """
    path = Path(dest) / CHECKSUMS_NAME
    if not path.is_file():
        return {}
    listed: dict[str, str] = {}
    for lineno, line in enumerate(read_text_lines(path), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{path}:{lineno}: not '<sha256>  <path>'")
        listed[name] = digest
    return listed


def write_checksums(dest: Path, listed: dict[str, str]) -> Path:
    """Write ``CHECKSUMS.sha256`` (``sha256sum`` format) from ``listed``: what fetch downloaded and built.

    Never computed from what happens to be on disk: a file changed or removed after it was built keeps its
    recorded checksum, so that ``data verify`` (and the next ``data fetch``, which repairs it) sees the change.
    """
    lines = [f"{digest}  {name}" for name, digest in sorted(listed.items())]
    return atomic_write_text(dest / CHECKSUMS_NAME, "".join(line + "\n" for line in lines))


def file_checksums(root: Path, output: str) -> dict[str, str]:
    """``{output/relative path: sha256}`` of the files of a built output (a file, or a folder's files)."""
    if root.is_file():
        return {output: sha256_file(root)}
    return {f"{output}/{p.relative_to(root).as_posix()}": sha256_file(p) for p in sorted(root.rglob("*"))
            if p.is_file()}


def verify_checksums(dest: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Compare the data files with ``CHECKSUMS.sha256``: ``{"ok", "changed", "missing", "unlisted"}`` paths.

    Raises:
        FileNotFoundError: ``dest`` holds no ``CHECKSUMS.sha256`` (it was not written by ``paranmt-hf data fetch``).
    """
    root = Path(dest)
    if not (root / CHECKSUMS_NAME).is_file():
        raise FileNotFoundError(
            f"{root} has no {CHECKSUMS_NAME}: only a folder written by `paranmt-hf data fetch` (which records every "
            f"file's checksum there) can be verified; to get one, run `paranmt-hf data fetch --dest DIR`"
        )
    listed = read_checksums(root)
    out: dict[str, list[str]] = {"ok": [], "changed": [], "missing": [], "unlisted": []}
    present = {p.relative_to(root).as_posix(): p for p in data_files(root)}
    for name, digest in listed.items():
        if name not in present:
            out["missing"].append(name)
        else:
            out["ok" if sha256_file(present[name]) == digest else "changed"].append(name)
    out["unlisted"] = sorted(set(present) - set(listed))
    return out


class DataFetcher:
    """Download, verify and install the sources into ``dest`` (see :func:`fetch_data` for the options)."""

    def __init__(
        self, dest: str | os.PathLike[str], verify: str = "tofu", mirror: str | None = None, overwrite: bool = False,
        retries: int = 3, timeout: float = 60.0, progress: bool = True, say: Callable[[str], None] | None = None,
        files: dict[str, str | os.PathLike[str]] | None = None,
    ) -> None:
        self.dest = Path(dest)
        known = {r.key for s in registry.SOURCES.values() for r in registry.all_remotes(s)}
        unknown = sorted(set(files or {}) - known)
        if unknown:
            raise ValueError(f"--file: unknown download key(s) {unknown}; `paranmt-hf data sources` lists them")
        self.files = {key: Path(path) for key, path in (files or {}).items()}
        self.verify = verify
        self.overwrite = overwrite
        self.lock = SourceLock.load(self.dest)
        if verify not in VERIFY_MODES:
            raise ValueError(f"verify must be one of {VERIFY_MODES}, got {verify!r}")
        mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV) or None
        self.downloader = Downloader(mirror=mirror, retries=retries, timeout=timeout, progress=progress)
        self.say = say or (lambda message: logger.info("%s", message))
        self.changed = False
        self.checksums = read_checksums(self.dest)

    # -------------------------------------------------------------------------------------------- downloads
    def download(self, remote: Remote) -> tuple[Remote, Downloaded]:
        """A verified local copy of ``remote`` (or of its fallback when every URL failed)."""
        expected, size = self.lock.expected(remote, self.verify), self.lock.expected_size(remote)
        target = self.dest / DOWNLOADS / remote.key
        if remote.key in self.files:
            return remote, self._given(remote, expected, size)
        if target.is_file():
            digest = sha256_file(target)
            if (expected is None or digest == expected) and (size is None or target.stat().st_size == size):
                url = self.lock.remotes.get(remote.key, {}).get("url", remote.urls[0] if remote.urls else "")
                return remote, Downloaded(target, digest, target.stat().st_size, url)
            logger.warning("%s: the cached copy does not match its checksum: downloading it again", target)
            target.unlink()
        try:
            return remote, self.downloader.fetch(remote.urls, target, expected, size, label=remote.key)
        except DownloadError as err:
            failed = type(err)(f"{remote.key}: {err}" + (f" ({self._origin(remote)})"
                                                         if isinstance(err, ChecksumError) else ""))
            if remote.fallback is None:
                raise failed from err
        self.say(f"   {failed}; trying {remote.fallback.key}")
        try:
            return self.download(remote.fallback)
        except DownloadError as err:
            kind = type(err) if type(err) is type(failed) else DownloadError
            raise kind(f"{failed}; then {err}") from err

    def _given(self, remote: Remote, expected: str | None, size: int | None) -> Downloaded:
        """The copy of ``remote`` the user gave (``--file``), checked like a download."""
        source = self.files[remote.key]
        if not source.is_file():
            raise DownloadError(f"--file {remote.key}={source}: no such file")
        target = self.dest / DOWNLOADS / remote.key
        with atomic_output(target, inputs=[source], overwrite=True) as tmp:
            shutil.copyfile(source, tmp)
        got = Downloaded(target, sha256_file(target), target.stat().st_size, source.resolve().as_uri())
        if (size is not None and got.size != size) or (expected is not None and got.sha256 != expected):
            target.unlink()
            raise ChecksumError(f"{remote.key}: the file given with --file ({source}) has sha256 {got.sha256} and "
                                f"{got.size} bytes, expected {expected} ({self._origin(remote)})")
        return got

    def _origin(self, remote: Remote) -> str:
        """Where the expected checksum comes from (for error messages)."""
        if remote.sha256:
            return "the checksum pinned in paranmt_hf/fetch/registry.py"
        entry = self.lock.remotes.get(remote.key, {})
        return (f"the checksum recorded on first use in {self.lock.path} on {entry.get('recorded')} from "
                f"{entry.get('url')}; if the source changed legitimately, delete that entry to accept the new copy")

    def _forget_unverified(self, used: list[tuple[Remote, Downloaded]]) -> None:
        """Delete downloads that failed their format checks and have no pinned or recorded checksum."""
        for remote, got in used:
            if not remote.sha256 and remote.key not in self.lock.remotes:
                got.path.unlink(missing_ok=True)

    def _build(self, source: Source, build: Callable[[list[Path]], dict[str, Any] | None]) -> dict[str, Any] | None:
        """Download the source's remotes, run ``build`` on them, then record them (first use) and the source."""
        used = [self.download(remote) for remote in source.remotes]
        try:
            extra = build([got.path for _, got in used])
        except (ArchiveError, ValueError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error) as err:
            self._forget_unverified(used)
            raise SourceFormatError(f"{source.name}: the downloaded files are not what the source should hold: "
                                    f"{err}") from err
        for remote, got in used:
            self.lock.record(remote, got.sha256, got.size, got.url)
        self.lock.record_source(source, list(dict.fromkeys(r.key for r, _ in used)), extra)
        self.lock.save()
        self.changed = True
        return extra

    # --------------------------------------------------------------------------------------- records, repair
    def output_problems(self, output: str) -> list[str] | None:
        """How an existing output differs from what fetch built (``["changed: eval/...", "missing: ..."]``).

        ``[]`` when it matches its recorded checksums; None when no checksum was recorded for it (an output that
        ``data fetch`` did not write).
        """
        entries = {name: digest for name, digest in self.checksums.items()
                   if name == output or name.startswith(output + "/")}
        if not entries:
            return None
        problems = []
        for name, digest in sorted(entries.items()):
            path = self.dest / name
            if not path.is_file():
                problems.append(f"missing: {name}")
            elif file_sha256(path) != digest:
                problems.append(f"changed: {name}")
        return problems

    def needs_build(self, output: str) -> bool:
        """Whether ``output`` is built: it is missing, ``overwrite`` was asked, or it fails verification.

        An output that fails verification is repaired: built again from the verified downloads.
        """
        if not (self.dest / output).exists() or self.overwrite:
            return True
        problems = self.output_problems(output)
        if problems is None:
            logger.info("%s was not written by data fetch (no recorded checksum): kept as it is", output)
            return False
        if problems:
            shown = ", ".join(problems[:4]) + (f" and {len(problems) - 4} more" if len(problems) > 4 else "")
            self.say(f"== {output} fails verification ({shown}): installing it again")
            return True
        return False

    def record_checksums(self, output: str, entries: dict[str, str]) -> None:
        """Record the checksums of a newly built ``output`` (replacing its earlier ones) in ``CHECKSUMS.sha256``."""
        with output_lock(self.dest / CHECKSUMS_NAME, wait=RECORD_WAIT):  # merged with another fetch's records
            current = read_checksums(self.dest)
            self.checksums = {name: digest for name, digest in current.items()
                              if not (name == output or name.startswith(output + "/"))}
            self.checksums.update(entries)
            write_checksums(self.dest, self.checksums)

    # ------------------------------------------------------------------------------------------------- eval
    def install_eval(self, source: Source, target: Path | None = None) -> list[str]:
        """Install an evaluation source's folder (at ``target``, default its place below ``dest``).

        Returns the outputs built (none when the folder exists and ``overwrite`` is false).
        """
        (output,) = source.outputs
        target = target if target is not None else self.dest / output
        try:
            name = target.resolve().relative_to(self.dest.resolve()).as_posix()
        except ValueError:  # installed outside the data folder: not recorded in its checksums
            name = None
        if target.exists() and not self.overwrite and (name is None or not self.needs_build(name)):
            return []
        self.say(f"== {source.name}: {source.description}")
        built: dict[str, str] = {}

        def build(files: list[Path]) -> None:
            with staged_folder(target, overwrite=True if target.exists() else self.overwrite) as staging:
                INSTALLERS[source.name](files, staging)
                built.update(file_checksums(staging, name or output))

        self._build(source, build)
        if name is not None:
            self.record_checksums(name, built)
        return [output]

    # ------------------------------------------------------------------------------------------------ train
    def held_out_sentences(self) -> set[str]:
        """Normalised sentences of every evaluation set in ``dest/eval`` plus SICK (downloaded for this)."""
        held_out = eval_sentences(self.dest / "eval")
        sick = registry.SOURCES["sick"]

        def build(files: list[Path]) -> dict[str, Any]:
            for path in dict.fromkeys(files):
                held_out.update(sick_sentences(path))
            return {"sentences": len(held_out)}

        self._build(sick, build)
        return held_out

    def build_train(self, source: Source, held_out: set[str], output: str, raw_pairs: Callable[[list[Path]],
                    Iterable[tuple[str, str]]]) -> CleanStats:
        """Download ``source``, clean its pairs against ``held_out`` and write ``output`` atomically."""
        stats = CleanStats()
        target = self.dest / output
        self.say(f"== {source.name}: {source.description}")
        built: dict[str, str] = {}

        def build(files: list[Path]) -> dict[str, Any]:
            with atomic_output(target, overwrite=True if target.exists() else self.overwrite) as tmp:
                write_pairs_gz(clean_pairs(raw_pairs(files), held_out, stats), tmp)
                built.update(file_checksums(tmp, output))
            return {"stats": stats.as_dict()}

        self._build(source, build)
        self.record_checksums(output, built)
        self.say(f"   {output}: {stats.pairs:,} pairs ({stats.removed_eval:,} in evaluation sets, "
                 f"{stats.removed_duplicate:,} duplicates, {stats.removed_malformed:,} malformed removed)")
        return stats


def _raw_pairs(source: Source, sample: int, seed: int, progress: bool) -> Callable[[list[Path]],
                                                                                  Iterable[tuple[str, str]]]:
    member = source.options.get("member", "")
    if source.name == "flickr30k":
        return flickr_ring_pairs
    if source.name.startswith("multi30k-"):
        return lambda files: parallel_pairs(files[0], files[1])
    if source.name.startswith("tatoeba-"):
        return lambda files: anki_pairs(files[0], member)
    if source.name == "paranmt5m":
        return lambda files: sampled_pairs(files[0], member, sample, seed, progress)
    raise KeyError(f"no builder for training source {source.name!r}")


def fetch_remote(remote: Remote, dest: str | os.PathLike[str] | None = None, verify: str = "tofu",
                 mirror: str | None = None, progress: bool = True) -> Path:
    """A verified local copy of one registry download, e.g. :data:`~paranmt_hf.fetch.registry.PARANMT_50M`.

    The file is kept in ``<dest>/.downloads/<key>`` (``dest`` default: the user cache of ``data fetch``), resumed
    after an interruption, held to the registry's checksum (or to the one recorded on its first download, in
    ``<dest>/SOURCES.json``), and reused by later calls.
    """
    from ..utils.paths import cache_data_dir

    fetcher = DataFetcher(dest if dest is not None else cache_data_dir(), verify=verify, mirror=mirror,
                          progress=progress)
    _, got = fetcher.download(remote)
    fetcher.lock.record(remote, got.sha256, got.size, got.url)
    fetcher.lock.save()
    return got.path


def fetch_data(
    dest: str | os.PathLike[str], only: str | None = None, verify: str = "tofu", mirror: str | None = None,
    overwrite: bool = False, paranmt_sample: int = PARANMT_SAMPLE, seed: int = 0, retries: int = 3,
    timeout: float = 60.0, progress: bool = True, say: Callable[[str], None] | None = None,
    files: dict[str, str | os.PathLike[str]] | None = None,
) -> FetchReport:
    """Build the data layout in ``dest`` from the public sources (see the module docstring).

    Args:
        dest: the data directory to fill (created if needed).
        only: ``"eval"``, ``"train"`` (also fetches missing evaluation sets: decontamination needs them); None: both.
        verify: ``"tofu"`` (unpinned checksums are recorded on first use) or ``"strict"`` (no checksum: refused).
        mirror: base URL serving every file as ``<mirror>/<host>/<path>`` (default ``$PARANMT_HF_MIRROR``).
        overwrite: rebuild outputs that exist (downloads are re-verified, not repeated).
        paranmt_sample: lines drawn from ParaNMT-5M (10,000 gives ``paranmt5m-sample-10k.tsv.gz``).
        seed: seed of that sample.
        retries: attempts per URL for interrupted transfers (each resumes with an HTTP Range request).
        timeout: socket timeout (s).
        progress: tqdm bars for downloads and sampling.
        say: receives one line per step (default: logging).
        files: download key -> a copy obtained by other means (checked like a download).

    Raises:
        paranmt_hf.fetch.UnreachableError: offline: stops at once (the message says what to do).
        FetchFailed: some sources failed (the others were installed); ``failures`` holds each error.
    """
    if only not in (None, *ONLY):
        raise ValueError(f"only must be one of {ONLY} or None, got {only!r}")
    fetcher = DataFetcher(dest, verify, mirror, overwrite, retries, timeout, progress, say, files)
    report = FetchReport(fetcher.dest)
    fetcher.dest.mkdir(parents=True, exist_ok=True)
    failures: dict[str, Exception] = {}
    for source in registry.EVAL_SOURCES:
        if source.kind != "eval":
            continue
        built = _attempt(fetcher, failures, source.name, partial(fetcher.install_eval, source))
        if built is None:
            continue
        report.built += built
        report.kept += [o for o in source.outputs if o not in built]
    if only != "eval":
        _fetch_train(fetcher, report, paranmt_sample, seed, progress, failures)
    if failures:
        raise FetchFailed(failures)
    return report


def _attempt(fetcher: DataFetcher, failures: dict[str, Exception], name: str, action: Callable[[], T]) -> T | None:
    """``action()``, or ``None`` once a failed download of ``name`` is said and recorded in ``failures``.

    The other sources go on; an unreachable network (``UnreachableError``) stops the whole fetch.
    """
    try:
        return action()
    except UnreachableError:
        raise
    except (DownloadError, UnpinnedError) as err:
        fetcher.say(f"   FAILED {name}: {err}")
        failures[name] = err
        return None


def _fetch_train(fetcher: DataFetcher, report: FetchReport, sample: int, seed: int, progress: bool,
                 failures: dict[str, Exception]) -> None:
    stats_path = fetcher.dest / STATS_PATH
    rebuild_all = bool(fetcher.output_problems(STATS_PATH))  # a changed or deleted STATS.json
    if rebuild_all:
        fetcher.say(f"== {STATS_PATH} fails verification: building the training files again")
    stats: dict[str, Any] = (json.loads(stats_path.read_text(encoding="utf-8"))
                             if stats_path.is_file() and not rebuild_all else {})
    held_out: set[str] | None = None
    for source in registry.TRAIN_SOURCES:
        output = paranmt_sample_output(sample) if source.name == "paranmt5m" else source.outputs[0]
        if not rebuild_all and not fetcher.needs_build(output):
            report.kept.append(output)
            continue
        if held_out is None:
            fetcher.say("== held-out sentences: every evaluation set + SICK")
            try:
                held_out = fetcher.held_out_sentences()
            except UnreachableError:
                raise
            except (DownloadError, UnpinnedError, FileNotFoundError) as err:
                failures["decontamination"] = err
                fetcher.say(f"   FAILED: the training data cannot be decontaminated: {err}")
                return
        build = partial(fetcher.build_train, source, held_out, output, _raw_pairs(source, sample, seed, progress))
        cleaned = _attempt(fetcher, failures, source.name, build)
        if cleaned is None:
            continue
        stats[output] = {**cleaned.as_dict(), "source": source.name}
        atomic_write_json(stats_path, stats)
        fetcher.record_checksums(STATS_PATH, file_checksums(stats_path, STATS_PATH))
        report.built.append(output)
        report.stats[output] = stats[output]
