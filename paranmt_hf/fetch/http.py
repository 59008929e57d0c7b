"""Resumable, verified HTTP downloads (standard library only).

- A download is written to ``<file>.part`` and renamed to ``<file>`` only when it is complete and verified.
- An interrupted transfer resumes with an HTTP ``Range`` request (``If-Range`` guards against a file that changed
  on the server meanwhile), within the same run (``retries``) or in the next run (the ``.part`` file is kept).
- The size and sha256 are checked against the expected values; a mismatch deletes the download and tries the next
  mirror (:class:`ChecksumError` when none is left).
- Google Drive's "can't scan this file for viruses" page is followed through its confirmation form; any other HTML
  page in place of a data file is an error (a moved file, a quota page, a captive portal), never saved as data.
- ``mirror`` rewrites every URL to ``<mirror>/<host>/<path>[?query]`` (an institutional mirror, or the tests' local
  server); the original hosts are then not contacted.

Ours, not ``pooch``: pooch has no resume of a killed transfer (no ``Range`` requests: it restarts from zero), one URL
per file (no fallback to a byte-identical mirror) and no Drive confirmation step; ``huggingface_hub``'s downloads
serve Hub repositories, and every source in :mod:`.registry` is a plain URL.
"""

from __future__ import annotations

import contextlib
import html.parser
import http.client
import json
import logging
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..utils.content_hash import sha256_file

logger = logging.getLogger(__name__)

CHUNK = 1 << 16
USER_AGENT = "paranmt-hf-data-fetch/1 (Python urllib)"


class DownloadError(OSError):
    """A file could not be downloaded from any of its URLs."""


class UnreachableError(DownloadError):
    """No connection could be made to any URL (no network, DNS failure, refused): the machine looks offline."""


class ChecksumError(DownloadError):
    """A download's size or sha256 differs from the expected value."""


class _Interrupted(Exception):
    """The transfer stopped before the end (resumable)."""


class _HttpStatusError(Exception):
    """The server answered with an error status (not retried on the same URL)."""


def mirror_url(url: str, mirror: str | None) -> str:
    """``url`` served by ``mirror``: ``https://host/a/b?q`` -> ``<mirror>/host/a/b?q`` (unchanged without mirror)."""
    if not mirror:
        return url
    parts = urllib.parse.urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}{query}"


class _FormParser(html.parser.HTMLParser):
    """The action and fields of the ``download-form`` of Google Drive's warning page."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._in_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form" and values.get("id") == "download-form":
            self.action, self._in_form = values.get("action"), True
        elif tag == "input" and self._in_form and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False


def confirmation_url(page: str, base_url: str) -> str | None:
    """The URL behind Google Drive's large-file warning page (its ``download-form``), or None."""
    parser = _FormParser()
    parser.feed(page)
    if not parser.action:
        return None
    action = urllib.parse.urljoin(base_url, parser.action)
    return f"{action}?{urllib.parse.urlencode(parser.fields)}" if parser.fields else action


@dataclass
class Downloaded:
    """A verified file: where it is, its digest and size, and the URL it came from."""

    path: Path
    sha256: str
    size: int
    url: str


@dataclass
class Downloader:
    """Download files with resume, retries, checksums and progress.

    Attributes:
        mirror: base URL that serves every file as ``<mirror>/<host>/<path>`` (None: the real hosts).
        retries: attempts per URL for an interrupted transfer (each resumes where the last one stopped).
        timeout: socket timeout in seconds.
        progress: show a tqdm bar per file.
        backoff: seconds to wait before retry ``i`` (times ``i``).
    """

    mirror: str | None = None
    retries: int = 3
    timeout: float = 60.0
    progress: bool = True
    backoff: float = 1.0

    def fetch(
        self, urls: tuple[str, ...] | list[str], target: Path, sha256: str | None = None, size: int | None = None,
        label: str | None = None,
    ) -> Downloaded:
        """Download the first URL that works into ``target`` (atomically), checking ``size``/``sha256`` if given.

        Raises:
            UnreachableError: no URL could be connected to. ChecksumError: every copy had the wrong content.
            DownloadError: the others (HTTP errors, HTML pages, transfers that kept failing).
        """
        target.parent.mkdir(parents=True, exist_ok=True)
        errors: list[str] = []
        unreachable = True
        checksum_failed = False
        for original in urls:
            url = mirror_url(original, self.mirror)
            try:
                got = self._fetch_one(url, target, label or target.name)
            except UnreachableError as err:
                errors.append(f"{url}: {err}")
                continue
            except DownloadError as err:
                unreachable = False
                errors.append(f"{url}: {err}")
                continue
            unreachable = False
            problem = _mismatch(got, sha256, size)
            if problem:
                checksum_failed = True
                errors.append(f"{url}: {problem}")
                logger.warning("rejected %s: %s", url, problem)
                target.unlink(missing_ok=True)
                continue
            return got
        detail = "; ".join(errors)
        if unreachable:
            raise UnreachableError(detail)
        if checksum_failed:
            raise ChecksumError(detail)
        raise DownloadError(detail)

    # ------------------------------------------------------------------------------------------------ one URL
    def _fetch_one(self, url: str, target: Path, label: str) -> Downloaded:
        part = target.with_name(target.name + ".part")
        meta_path = target.with_name(target.name + ".part.json")
        attempt = 0
        while True:
            attempt += 1
            try:
                final_url = self._transfer(url, part, meta_path, label)
                break
            except _Interrupted as err:
                if attempt >= self.retries:
                    raise DownloadError(f"transfer interrupted {attempt} times ({err}); run again to resume "
                                        f"from {part.stat().st_size if part.exists() else 0} bytes") from err
                logger.warning("%s: transfer interrupted (%s); resuming (attempt %d/%d)", url, err, attempt + 1,
                               self.retries)
                time.sleep(self.backoff * attempt)
            except _HttpStatusError as err:
                raise DownloadError(str(err)) from err
        digest = sha256_file(part)
        size = part.stat().st_size
        os.replace(part, target)
        meta_path.unlink(missing_ok=True)
        return Downloaded(target, digest, size, final_url)

    def _open(self, url: str, headers: dict[str, str]) -> http.client.HTTPResponse:
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
        try:
            return urllib.request.urlopen(request, timeout=self.timeout)  # noqa: S310 - http(s) URLs of the registry
        except urllib.error.HTTPError as err:
            if err.code == 416:
                raise
            raise _HttpStatusError(f"HTTP {err.code} {err.reason}") from err
        except urllib.error.URLError as err:
            raise UnreachableError(f"cannot connect ({err.reason})") from err
        except (TimeoutError, ConnectionError, http.client.HTTPException) as err:
            raise UnreachableError(f"cannot connect ({err})") from err

    def _transfer(self, url: str, part: Path, meta_path: Path, label: str) -> str:
        meta = _read_meta(meta_path)
        have = part.stat().st_size if part.exists() else 0
        if have and meta.get("url") != url:
            have = 0  # a partial file from another URL: start over
        headers = {}
        if have:
            headers["Range"] = f"bytes={have}-"
            validator = meta.get("etag") or meta.get("last_modified")
            if validator:
                headers["If-Range"] = validator
        try:
            response = self._open(url, headers)
        except urllib.error.HTTPError:  # 416: the range is past the end (stale .part): start over
            part.unlink(missing_ok=True)
            response = self._open(url, {})
            have = 0
        response = self._follow_confirmation(response, url)
        status = getattr(response, "status", 200)
        if status == 206 and (not have or _range_start(response.headers.get("Content-Range")) != have):
            response.close()  # a range we did not ask for: start over with the whole file
            part.unlink(missing_ok=True)
            response, status, have = self._open(url, {}), 200, 0
        with contextlib.closing(response):
            if have and status == 206:
                mode = "ab"
                logger.info("%s: resuming at byte %d", url, have)
            else:
                mode, have = "wb", 0
            length = response.headers.get("Content-Length")
            total = have + int(length) if length is not None else None
            _write_meta(meta_path, {"url": url, "etag": response.headers.get("ETag"),
                                    "last_modified": response.headers.get("Last-Modified")})
            written = have
            with open(part, mode) as out, _progress(self.progress, total, have, label) as bar:
                for block in _blocks(response):
                    out.write(block)
                    written += len(block)
                    bar.update(len(block))
            if total is not None and written < total:
                raise _Interrupted(f"got {written} of {total} bytes")
            return response.geturl() or url

    def _follow_confirmation(self, response: http.client.HTTPResponse, url: str) -> http.client.HTTPResponse:
        """Pass Google Drive's warning page; refuse any other HTML page served in place of a data file."""
        kind = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "text/html" or url.endswith((".html", ".htm")):
            return response
        with contextlib.closing(response):
            page = response.read(1 << 20).decode("utf-8", "replace")
        target = confirmation_url(page, response.geturl() or url)
        if target is None:
            raise _HttpStatusError("the server sent an HTML page instead of the file (moved, quota exceeded or "
                                   "blocked)")
        logger.info("%s: following the download confirmation page", url)
        confirmed = self._open(target, {})
        if (confirmed.headers.get("Content-Type") or "").lower().startswith("text/html"):
            confirmed.close()
            raise _HttpStatusError("the confirmation page led to another HTML page (quota exceeded?)")
        return confirmed


def _mismatch(got: Downloaded, sha256: str | None, size: int | None) -> str | None:
    if size is not None and got.size != size:
        return f"size {got.size} bytes, expected {size}"
    if sha256 is not None and got.sha256 != sha256.lower():
        return f"sha256 {got.sha256}, expected {sha256}"
    return None


def _blocks(response: http.client.HTTPResponse) -> Iterator[bytes]:
    while True:
        try:
            block = response.read(CHUNK)
        except (http.client.IncompleteRead, ConnectionError, TimeoutError, OSError) as err:
            raise _Interrupted(str(err) or type(err).__name__) from err
        if not block:
            return
        yield block


def _range_start(content_range: str | None) -> int | None:
    """The first byte of ``Content-Range: bytes a-b/n``."""
    if not content_range or not content_range.startswith("bytes "):
        return None
    try:
        return int(content_range[6:].split("-", 1)[0])
    except ValueError:
        return None


def _read_meta(path: Path) -> dict[str, str]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_meta(path: Path, meta: dict[str, str | None]) -> None:
    path.write_text(json.dumps({k: v for k, v in meta.items() if v}), encoding="utf-8")


@contextlib.contextmanager
def _progress(enabled: bool, total: int | None, initial: int, label: str) -> Iterator[object]:
    from tqdm.auto import tqdm

    with tqdm(total=total, initial=initial, unit="B", unit_scale=True, unit_divisor=1024, desc=label,
              disable=not enabled, dynamic_ncols=True, leave=False) as bar:
        yield bar
