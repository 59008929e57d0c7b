"""A local HTTP server (standard library, in a thread) serving every registry source in its real format.

The files are built from the shared data (``../shared/data``) so that ``paranmt-hf data fetch`` against the server
must reproduce that data: the SemEval zips in SentEval's folder layout (``STS2016.*`` names), the STS Benchmark
tarball, the two STS 2017 zips, LASER's Tatoeba files (byte-identical: their pinned checksums hold), SimLex-999's
zip, SICK-format files, Multi30k's gzip'd line files, Anki-format zips and the ParaNMT-5M zip. Training files are
built back from the shared (clean) pairs plus planted pairs that the cleaning must remove.

The server answers Range requests (206) and can drop a connection half way through a file once, serve corrupted
bytes, or put Google Drive's HTML warning page in front of a file.
"""

from __future__ import annotations

import dataclasses
import difflib
import gzip
import io
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from paranmt_hf.fetch import registry
from paranmt_hf.fetch.http import mirror_url

PINNED_KEEP = ("tatoeba/tatoeba.", "tatoeba/README.md")  # LASER's files: the shared copies are byte-identical


class SourceServer:
    """Serve ``files`` (``"/host/path?query"`` -> bytes) on 127.0.0.1; ``url`` is the mirror base URL."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.drop_once: set[str] = set()  # paths whose next response stops half way (connection closed)
        self.html_first: dict[str, str] = {}  # path -> confirm path: answer with Drive's warning page first
        self.ignore_range: set[str] = set()  # paths served whole (200) even when a Range is asked for
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.requests.append((self.path, self.headers.get("Range")))
                if self.path in server.html_first:
                    confirm = server.html_first.pop(self.path)
                    page = ('<html><body><form id="download-form" action="' + confirm.split("?")[0] + '" '
                            'method="get"><input type="hidden" name="id" value="x">'
                            '<input type="hidden" name="confirm" value="t"></form></body></html>').encode()
                    self._send(200, page, {"Content-Type": "text/html; charset=utf-8"})
                    return
                data = server.files.get(self.path)
                if data is None:
                    self._send(404, b"not found", {"Content-Type": "text/plain"})
                    return
                start, status, extra = 0, 200, {}
                wanted = self.headers.get("Range")
                if wanted and wanted.startswith("bytes=") and self.path not in server.ignore_range:
                    start = int(wanted[6:].split("-")[0])
                    if start >= len(data):
                        self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                        return
                    status, extra = 206, {"Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
                body = data[start:]
                kind = "text/html" if data.startswith(b"<html") else "application/octet-stream"
                headers = {"Content-Type": kind, "ETag": '"v1"', **extra}
                if self.path in server.drop_once:
                    server.drop_once.discard(self.path)
                    self.send_response(status)
                    for key, value in {**headers, "Content-Length": str(len(body))}.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._send(status, body, headers)

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for key, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the server."""
        self._httpd.shutdown()
        self._httpd.server_close()


# --------------------------------------------------------------------------------------------- registry in tests
def unpin(remote: registry.Remote | None) -> registry.Remote | None:
    """The remote without its pinned checksum (the tests serve their own copies), except LASER's Tatoeba files."""
    if remote is None:
        return None
    keep = remote.key.startswith(PINNED_KEEP)
    return dataclasses.replace(remote, sha256=remote.sha256 if keep else None, size=remote.size if keep else None,
                               fallback=unpin(remote.fallback))


def unpinned_registry(monkeypatch) -> None:
    """Replace the registry's sources by copies whose remotes are unpinned (see :func:`unpin`)."""
    def fix(sources):
        return tuple(dataclasses.replace(s, remotes=tuple(unpin(r) for r in s.remotes)) for s in sources)

    evals, trains = fix(registry.EVAL_SOURCES), fix(registry.TRAIN_SOURCES)
    monkeypatch.setattr(registry, "EVAL_SOURCES", evals)
    monkeypatch.setattr(registry, "TRAIN_SOURCES", trains)
    monkeypatch.setattr(registry, "SOURCES", {s.name: s for s in (*evals, *trains)})


# ------------------------------------------------------------------------------------------------ file builders
def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _gz_lines(lines: list[str]) -> bytes:
    return gzip.compress("".join(line + "\n" for line in lines).encode("utf-8"), mtime=0)


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """The pairs of a ``a \\t b`` gzip'd file."""
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as handle:
        return [tuple(line.rstrip("\n").split("\t")) for line in handle]  # type: ignore[misc]


SENTEVAL_DIRS = {"STS12": "test-gold", "STS13": "test-gs", "STS14": "sts-en-test-gs-2014",
                 "STS15": "test_evaluation_task2a", "STS16": "sts2016-english-with-gs-v1.0"}


def eval_files(data: Path) -> dict[str, bytes]:
    """Remote key -> served bytes for the evaluation sets, in the upstream formats."""
    sts = data / "eval" / "sts"
    out: dict[str, bytes] = {}
    for source in registry.EVAL_SOURCES:
        if source.name in ("sts12", "sts13", "sts14", "sts15", "sts16"):
            year = source.name.upper()
            folder = sts / f"{year}-en-test"
            members = {}
            for path in sorted(folder.iterdir()):
                name = path.name.replace("STS.", "STS2016.", 1) if year == "STS16" else path.name
                members[f"{SENTEVAL_DIRS[year]}/{name}"] = path.read_bytes()
            members[f"{SENTEVAL_DIRS[year]}/correlation-noconfidence.pl"] = b"#!/usr/bin/perl\n"  # ignored
            out[source.remotes[0].key] = _zip(members)
    out["sts/Stsbenchmark.tar.gz"] = _tar_gz(
        {f"stsbenchmark/{p.name}": p.read_bytes() for p in sorted((sts / "STSBenchmark").iterdir())})
    sts17 = sts / "STS17"
    out["sts/Sts2017.eval.v1.1.zip"] = _zip(
        {f"STS2017.eval.v1.1/{p.name}": p.read_bytes() for p in sorted(sts17.iterdir()) if ".gs." not in p.name})
    out["sts/Sts2017.gs.zip"] = _zip(
        {**{f"STS2017.gs/{p.name}": p.read_bytes() for p in sorted(sts17.glob("STS.gs.*.txt"))},
         "STS2017.gs/README.txt": b"gold standard readme (the first archive's README wins)\n"})
    for path in sorted((data / "eval" / "tatoeba").iterdir()):
        out[f"tatoeba/{path.name}"] = path.read_bytes()
    simlex = data / "eval" / "simlex"
    out["simlex/SimLex-999.zip"] = _zip({f"SimLex-999/{p.name}": p.read_bytes() for p in sorted(simlex.iterdir())})
    header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
    for split, sentence in (("train", SICK_PLANTED), ("trial", "A man is slicing a tomato"),
                            ("test_annotated", "Nobody is playing the guitar")):
        row = f"1\t{sentence}\tA cat is sleeping\t3.0\tNEUTRAL\n"
        out[f"sick/SICK_{split}.txt"] = ("\ufeff" + header + row).encode()
    return out


SICK_PLANTED = "Two dogs are wrestling in the snow under a purple sky"  # only in the served SICK files


def planted_sentences(data: Path) -> list[str]:
    """Sentences of evaluation sets (written with other case and spacing) to plant in the training sources."""
    test = (data / "eval" / "sts" / "STSBenchmark" / "sts-test.csv").read_text(encoding="utf-8").splitlines()
    msr = (data / "eval" / "sts" / "STS12-en-test" / "STS.input.MSRpar.txt").read_text(encoding="utf-8")
    first = test[0].split("\t")[5]
    return ["  " + first.upper().replace(" ", "   ") + " ", msr.splitlines()[0].split("\t")[1]]


def _merge_multi30k(rows: list[dict[str, str]], pairs: list[tuple[str, str]], lang: str) -> list[dict[str, str]]:
    """Merge a language's (en, xx) pairs into rows aligned on the English side (keeping both orders)."""
    matcher = difflib.SequenceMatcher(None, [r["en"] for r in rows], [en for en, _ in pairs], autojunk=False)
    merged: list[dict[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                merged.append({**rows[i], lang: pairs[j][1]})
        else:
            merged += rows[i1:i2]
            merged += [{"en": en, lang: xx} for en, xx in pairs[j1:j2]]
    return merged


def _flickr_images(pairs: list[tuple[str, str]], filler: str) -> list[list[str]]:
    """Five captions per image whose ring pairs, once cleaned, are exactly ``pairs`` (fillers get removed)."""
    images, i, n = [], 0, len(pairs)
    while i < n:
        ring = pairs[i:i + 5]
        if len(ring) == 5 and all(ring[j][1] == ring[j + 1][0] for j in range(4)) and ring[4][1] == ring[0][0]:
            images.append([a for a, _ in ring])
            i += 5
            continue
        k = 1
        while k < 3 and i + k < n and pairs[i + k - 1][1] == pairs[i + k][0]:
            k += 1
        captions = [pairs[i][0]] + [pairs[i + j][1] for j in range(k)]
        images.append(captions + [filler] * (5 - len(captions)))
        i += k
    return images


def train_files(data: Path, plant_sick: bool = True) -> dict[str, bytes]:
    """Remote key -> served bytes for the training sources, rebuilt from the shared (clean) pairs + planted ones.

    Planted (all must be removed): a sentence of STS-B test and one of STS12 (other case/spacing) in every source,
    the served SICK's sentence in the German Tatoeba file (``plant_sick``: when the tests' SICK files are served), and
    a case/space variant of a kept pair (a duplicate).
    """
    train = data / "train"
    planted = planted_sentences(data)
    out: dict[str, bytes] = {}
    # Flickr30k: five caption files
    flickr = read_pairs(train / "flickr30k-caption-pairs.tsv.gz")
    images = _flickr_images(flickr, planted[0])
    for k in range(5):
        out[f"multi30k/task2/raw/train.{k + 1}.en.gz"] = _gz_lines([img[k] for img in images])
    # Multi30k task 1: one English file shared by three languages
    rows = [{"en": en, "de": de} for en, de in read_pairs(train / "bitext" / "multi30k-en-de.tsv.gz")]
    for lang in ("fr", "cs"):
        rows = _merge_multi30k(rows, read_pairs(train / "bitext" / f"multi30k-en-{lang}.tsv.gz"), lang)
    rows.insert(2, {"en": planted[0], "de": "x", "fr": "x", "cs": "x"})
    out["multi30k/task1/raw/train.en.gz"] = _gz_lines([r["en"] for r in rows])
    for lang in ("de", "fr", "cs"):
        out[f"multi30k/task1/raw/train.{lang}.gz"] = _gz_lines([r.get(lang, planted[1]) for r in rows])
    # Tatoeba: Anki-format zips (English \t foreign \t attribution)
    for short, lang, key in (("es", "spa", "tatoeba/spa-eng-tf.zip"), ("fr", "fra", "tatoeba/fra-eng-tf.zip"),
                             ("de", "deu", "tatoeba/deu-eng-anki.zip")):
        pairs = read_pairs(train / "bitext" / f"tatoeba-en-{short}.tsv.gz")
        lines = [f"{en}\t{xx}\tCC-BY 2.0 (France) Attribution: tatoeba.org #{i} (a) & #{i + 1} (b)"
                 for i, (en, xx) in enumerate(pairs)]
        lines.insert(3, f"{planted[0]}\tx\tCC-BY 2.0 (France)")
        lines.insert(5, f"  {pairs[0][0].upper()} \t{pairs[0][1]}\tCC-BY 2.0 (France)")  # duplicate of pair 0
        if short == "de" and plant_sick:
            lines.insert(7, f"{SICK_PLANTED}\tZwei Hunde ringen im Schnee.\tCC-BY 2.0 (France)")
        folder = "spa-eng/" if short == "es" else ""
        out[key] = _zip({f"{folder}{lang}.txt": "".join(line + "\n" for line in lines).encode("utf-8"),
                         "_about.txt": b"Tatoeba export\n"})
    # ParaNMT-5M processed release (the whole served file is "sampled": it has fewer than 10,000 lines)
    pairs = read_pairs(train / "paranmt5m-sample-10k.tsv.gz")
    lines = [f"{a}\t{b}" for a, b in pairs]
    lines.insert(4, f"{planted[1].lower()}\tsomething else .")
    out["paranmt/para-nmt-5m-processed.zip"] = _zip(
        {"para-nmt-5m-processed/para-nmt-5m-processed.txt": "".join(x + "\n" for x in lines).encode("utf-8")})
    return out


def server_path(url: str) -> str:
    """The path under which the server serves a registry URL (``/<host>/<path>[?query]``)."""
    return mirror_url(url, "http://m")[len("http://m"):]


def remote_by_key(key: str) -> registry.Remote:
    """The registry remote (or fallback) with this key."""
    by_key = {r.key: r for s in registry.SOURCES.values() for r in registry.all_remotes(s)}
    return by_key[key]


def served_paths(files_by_key: dict[str, bytes]) -> dict[str, bytes]:
    """Remote key -> bytes, turned into server path (of the remote's first URL) -> bytes."""
    return {server_path(remote_by_key(key).urls[0]): data for key, data in files_by_key.items()}
