"""Every public source the project downloads, in one place: URLs, byte-identical mirrors, checksums, licences.

A :class:`Remote` is one downloadable file. Its ``urls`` are the primary URL followed by *byte-identical* mirrors
(the same ``sha256`` applies to all of them). ``fallback`` is a different copy (another snapshot, another format)
tried only when every URL failed; it has its own checksum.

Checksums: ``sha256``/``size`` are pinned only where they were verified byte for byte: GitHub files pinned to a
commit (LASER's Tatoeba test sets, Multi30k, SimLex-999, SICK), hashed from the repositories themselves. Files
that could not be downloaded while this registry was written (the SemEval archives, the Tatoeba/Anki exports, the
Google Drive copies of ParaNMT) carry ``sha256=None``: ``paranmt-hf data fetch`` then records the size and sha256
of the first download that passes its format checks in the destination's ``SOURCES.json`` (trust on first use)
and holds every later download to it; ``--verify strict`` refuses them instead.

A :class:`Source` groups the remotes that build one part of the data layout (its ``outputs``, relative to the
data directory) and records the licence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..data.sts import STS_YEARS
from ..data.tatoeba import TATOEBA_LANGS


@dataclass(frozen=True)
class Remote:
    """One downloadable file.

    Attributes:
        key: stable name of the download (its path below ``<dest>/.downloads`` and its key in ``SOURCES.json``).
        urls: primary URL first, then byte-identical mirrors.
        sha256: expected hex digest; None = recorded on first verified download (trust on first use).
        size: expected size in bytes; None = unknown.
        fallback: another copy (different bytes) tried when every URL failed.
        note: provenance (shown by ``paranmt-hf data sources``).
    """

    key: str
    urls: tuple[str, ...]
    sha256: str | None = None
    size: int | None = None
    fallback: Remote | None = None
    note: str = ""


@dataclass(frozen=True)
class Source:
    """The remotes that build one part of the layout, with the part's licence.

    Attributes:
        name: short name (``paranmt-hf data sources``, ``SOURCES.json``).
        kind: ``"eval"``, ``"train"`` or ``"decontamination"`` (held-out sets only used to clean the training data).
        outputs: what it builds, relative to the data directory.
        remotes: the files it needs, in the order the builder takes them.
        licence: the data's licence / terms of use.
        homepage: where the data is described.
    """

    name: str
    kind: str
    description: str
    outputs: tuple[str, ...]
    remotes: tuple[Remote, ...]
    licence: str
    homepage: str
    options: dict[str, str] = field(default_factory=dict)


def _github(repo: str, commit: str, path: str) -> tuple[str, str]:
    """A GitHub file pinned to a commit and its jsDelivr mirror (byte-identical)."""
    return (f"https://raw.githubusercontent.com/{repo}/{commit}/{path}",
            f"https://cdn.jsdelivr.net/gh/{repo}@{commit}/{path}")


def _sts_wiki(path: str) -> tuple[str, str]:
    """The STS wiki (ixa2.si.ehu.eus) and its former host name (the URLs SentEval's data script uses)."""
    return (f"http://ixa2.si.ehu.eus/stswiki/images/{path}", f"http://ixa2.si.ehu.es/stswiki/images/{path}")


def _gdrive(file_id: str) -> str:
    """Google Drive's direct download of a public file (``confirm=t`` skips the large-file warning page)."""
    return f"https://drive.usercontent.google.com/download?id={file_id}&export=download&confirm=t"


# ---------------------------------------------------------------------------------------------------- ParaNMT-50M
PARANMT_50M_ID = "1rbF3daJjCsa1-fu2GANeJd2FBXos1ugD"
PARANMT_50M_URL = _gdrive(PARANMT_50M_ID)
"""ParaNMT-50M (``para-nmt-50m/para-nmt-50m.txt`` in a zip), the authors' Google Drive copy, direct download."""
PARANMT_50M_OLD_URL = "http://phontron.com/data/para-nmt-50m.zip"
"""The original URL (HTTP 404 since 2021, PRAS pull request #1)."""
PARANMT_50M_OLD_URLS = (
    PARANMT_50M_OLD_URL,
    f"https://drive.google.com/uc?export=download&id={PARANMT_50M_ID}",  # PRAS PR #1 (needs the confirm step)
)
PARANMT_HOMEPAGE = "http://www.cs.cmu.edu/~jwieting"
PARANMT_50M = Remote(
    "paranmt/para-nmt-50m.zip", (PARANMT_50M_URL, PARANMT_50M_OLD_URLS[1]),
    note="ParaNMT-50M (~51.4M lines, reference \\t back-translation \\t score); Google Drive copy linked by the "
    "authors after phontron.com went away. Read by load_paranmt('full'), not by `data fetch`.",
)

# ------------------------------------------------------------------------------------------------ evaluation sets
_STS_ARCHIVES = {  # SentEval's data/downstream/get_transfer_data.bash
    "STS12": "4/40/STS2012-en-test.zip",
    "STS13": "2/2f/STS2013-en-test.zip",
    "STS14": "8/8c/STS2014-en-test.zip",
    "STS15": "d/da/STS2015-en-test.zip",
    "STS16": "9/98/STS2016-en-test.zip",
}
STS_LICENCE = ("Scores CC BY-SA 4.0 (STS 2016-2017) or research use; the text of each dataset has its own licence, "
               "listed in the readme/LICENSE files installed with it (e.g. MSRpar: Microsoft Research terms)")
STS_HOMEPAGE = "http://ixa2.si.ehu.eus/stswiki"

_LASER = ("facebookresearch/LASER", "74bc6ae7ffb7cba670fe0f428d0ede9f666fb821")
# sha256 and size of LASER's data/tatoeba/v1 files at that commit (identical to ../shared/data/eval/tatoeba)
_TATOEBA_FILES = {
    "README.md": ("5fbce42e75e8f2200dd36ed90279aa10a06ed6db2e34a7fef7f55e99c53af467", 1226),
    "tatoeba.ara-eng.ara": ("e67a0ae072b79cd9e8eb09f166c3bc0b23488d39f5720f2ee0a8350ae17b719f", 43582),
    "tatoeba.ara-eng.eng": ("3c11838c963f598a52dcf2f452b666353538257001db5c59c3a5f54a999b336b", 29068),
    "tatoeba.cmn-eng.cmn": ("965d033966fcd186c89741ad49ab4b0a0b2bbd33e02666635ff3b2be23c1ac1f", 33410),
    "tatoeba.cmn-eng.eng": ("29ba36232488f5806aceccac57c59c5e750ddd08edb40eef417e3ada9ff9a239", 35521),
    "tatoeba.deu-eng.deu": ("edfa6f75a42554df388f45891735d5e4214158a99def4b73b5908af4a3054551", 57121),
    "tatoeba.deu-eng.eng": ("eb9cc83a42f2c4b22f310d05311207e41abb56c2a084666cac3ee0f84d2d0b84", 48446),
    "tatoeba.fra-eng.eng": ("5634220f8a26a9a23b84753a9aec0b0832e6bdaa9da3f83e0bd84c928c3f46e3", 36291),
    "tatoeba.fra-eng.fra": ("644172ff9642fefa9e41c29b7d6f44196518e84350dc44d4992e943c0cca92b6", 43727),
    "tatoeba.rus-eng.eng": ("7b26f52d6085b7c4944d6f5f6f5b6e1932085b42112f1444db515ce59e878fb8", 33650),
    "tatoeba.rus-eng.rus": ("446ff2cae66053c2277d9735b2c2df6b786cae258385f7ade7bed68d8835c6a0", 58822),
    "tatoeba.spa-eng.eng": ("89e4470f4572040b1ca94b3edad97dcd8bd2f0141f072e12933b8659dadf917d", 34776),
    "tatoeba.spa-eng.spa": ("f9628cea40481e8251f0999718bd893cff0f261752f5e526b3bc20284e2ca018", 37490),
    "tatoeba.tur-eng.eng": ("a768df7dd3d1344f872a458b32c3a65e24f8381826ccb16ba6677426176c8121", 34278),
    "tatoeba.tur-eng.tur": ("1ffa0acc006018b3105abda41a4d4ca42f3c122964a49b71793546367b079a86", 37607),
}
assert {n.split(".")[1].split("-")[0] for n in _TATOEBA_FILES if n.startswith("tatoeba.")} == set(TATOEBA_LANGS)

_FH295 = ("fh295/fh295.github.io", "7f8482f3b39466a4e1e79d1b4ebecb9ba9040e4a")
_SICK = ("brmson/dataset-sts", "e1d3375f5b3bc24f21aa4e46f96eb379e9fc1081")
_SICK_FILES = {  # the SemEval-2014 task 1 release files, as committed there (readme.txt is SICK's own)
    "train": ("266cf8047149bd1d68138dd30439f3122bff30069740ac6705bb6197d9f1b48e", 506243),
    "trial": ("5a88cfb62f8c6bd2a3cce0f2421ba2cb8c2be5ab4a800f6f01e2c64aafb7db56", 57225),
    "test_annotated": ("2b8aa806658d6fc23c6824c83776c2d4fee7556000817b5ec0f982861413b7d0", 559979),
}
_SICK_ZENODO = Remote("sick/SICK.zip", ("https://zenodo.org/records/2787612/files/SICK.zip",),
                      note="the full SICK release (SICK.txt, all splits) on Zenodo")

EVAL_SOURCES: tuple[Source, ...] = (
    *(
        Source(
            name=year.lower(), kind="eval", description=f"SemEval {year} English test sets (organisers' files)",
            outputs=(f"eval/sts/{folder}",),
            remotes=(Remote(f"sts/{_STS_ARCHIVES[year].rsplit('/', 1)[1]}", _sts_wiki(_STS_ARCHIVES[year])),),
            licence=STS_LICENCE, homepage=STS_HOMEPAGE,
        )
        for year, (folder, _) in STS_YEARS.items()
    ),
    Source(
        name="stsb", kind="eval", description="STS Benchmark train/dev/test (sts-*.csv)",
        outputs=("eval/sts/STSBenchmark",),
        remotes=(Remote("sts/Stsbenchmark.tar.gz", _sts_wiki("4/48/Stsbenchmark.tar.gz")),),
        licence=STS_LICENCE + "; see LICENSE.txt", homepage=STS_HOMEPAGE + "/index.php/STSbenchmark",
    ),
    Source(
        name="sts17", kind="eval", description="SemEval-2017 task 1, all seven tracks (inputs + gold scores)",
        outputs=("eval/sts/STS17",),
        remotes=(
            Remote("sts/Sts2017.eval.v1.1.zip", _sts_wiki("2/20/Sts2017.eval.v1.1.zip"),
                   fallback=Remote("sts/sts2017.eval.v1.1.zip",
                                   ("http://alt.qcri.org/semeval2017/task1/data/uploads/sts2017.eval.v1.1.zip",))),
            Remote("sts/Sts2017.gs.zip", _sts_wiki("7/70/Sts2017.gs.zip"),
                   fallback=Remote("sts/sts2017.gs.zip",
                                   ("http://alt.qcri.org/semeval2017/task1/data/uploads/sts2017.gs.zip",))),
        ),
        licence="CC BY-SA 4.0 (LICENSE.txt; SNLI CC BY-SA 4.0, WMT news commentary)",
        homepage="https://alt.qcri.org/semeval2017/task1/",
    ),
    Source(
        name="tatoeba", kind="eval", description="LASER Tatoeba bitext-mining test sets (1,000 pairs per language)",
        outputs=("eval/tatoeba",),
        remotes=tuple(
            Remote(f"tatoeba/{name}", _github(*_LASER, f"data/tatoeba/v1/{name}"), sha256=sha, size=size)
            for name, (sha, size) in _TATOEBA_FILES.items()
        ),
        licence="CC-BY 2.0 FR (Tatoeba terms of use, https://tatoeba.org/eng/terms_of_use)",
        homepage="https://github.com/facebookresearch/LASER/tree/main/data/tatoeba/v1",
    ),
    Source(
        name="simlex", kind="eval", description="SimLex-999 (original release)",
        outputs=("eval/simlex",),
        remotes=(Remote(
            "simlex/SimLex-999.zip",
            ("https://fh295.github.io/SimLex-999.zip", _github(*_FH295, "SimLex-999.zip")[0]),
            sha256="30f40eb18f41b08b65dfbc328f473e8b69ba444b1c9d053c1adde2324fc76315", size=16805,
            fallback=Remote("simlex/SimLex-999-cam.zip", ("https://www.cl.cam.ac.uk/~fh295/SimLex-999.zip",)),
        ),),
        licence="Research use; cite Hill, Reichart & Korhonen (2015) (README.txt)",
        homepage="https://fh295.github.io/simlex.html",
    ),
    Source(
        name="sick", kind="decontamination",
        description="SICK (SemEval-2014 task 1, = mteb's SICK-R): a held-out evaluation set the training pairs are "
        "cleaned against (not installed)",
        outputs=(),
        remotes=tuple(
            Remote(f"sick/SICK_{split}.txt", _github(*_SICK, f"data/sts/sick2014/SICK_{split}.txt"), sha256=sha,
                   size=size, fallback=_SICK_ZENODO)
            for split, (sha, size) in _SICK_FILES.items()
        ),
        licence="CC BY-NC-SA 3.0", homepage="https://marcobaroni.org/composes/sick.html",
    ),
)

# -------------------------------------------------------------------------------------------------- training data
_MULTI30K = ("multi30k/dataset", "a3d2e0d26b56f3846f66a952536ffed4e401d05a")
# sha256 and size of multi30k/dataset's data/task{1,2}/raw training files at that commit
_MULTI30K_FILES = {
    "task1/raw/train.en.gz": ("d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f", 568929),
    "task1/raw/train.de.gz": ("726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6", 637044),
    "task1/raw/train.fr.gz": ("622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c", 604242),
    "task1/raw/train.cs.gz": ("a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077", 593827),
    "task2/raw/train.1.en.gz": ("a0e057f07a9733199c0d755d77f6d583dc6f40a3180734b1130a216e2fdf3a3b", 867789),
    "task2/raw/train.2.en.gz": ("d79dd70a9eafb2d1fe40151621278c4ae69b3c148c5052a53d7c7a41bf3ba023", 666845),
    "task2/raw/train.3.en.gz": ("86e16fdcc699bcb6bca0f87c3cf1051f7de5ee3674dd588cedc5200194282749", 555423),
    "task2/raw/train.4.en.gz": ("3771b84e010ad6197806d2a1188cb07c12149e3e0d178dd5966dee5763733686", 465845),
    "task2/raw/train.5.en.gz": ("73988689307fe836994eae59735dc840c15da9775455fa76e6ed22606a042a91", 375613),
}


def _multi30k(path: str) -> Remote:
    sha, size = _MULTI30K_FILES[path]
    return Remote(f"multi30k/{path}", _github(*_MULTI30K, f"data/{path}"), sha256=sha, size=size)


MULTI30K_LICENCE = "Flickr30k / Multi30k: non-commercial research use (Flickr30k terms of use)"
ANKI_LICENCE = "CC-BY 2.0 FR (Tatoeba; the third column of each line names the sentences' authors)"


def _anki(lang: str) -> Remote:
    return Remote(f"tatoeba/{lang}-eng-anki.zip", (f"https://www.manythings.org/anki/{lang}-eng.zip",),
                  note=f"manythings.org's current Tatoeba export ({lang}.txt: English \\t {lang} \\t attribution); "
                  "updated over time, so counts change")


TRAIN_SOURCES: tuple[Source, ...] = (
    Source(
        name="flickr30k", kind="train",
        description="Flickr30k captions (Multi30k task 2, train): the 5 captions of an image ring-paired",
        outputs=("train/flickr30k-caption-pairs.tsv.gz",),
        remotes=tuple(_multi30k(f"task2/raw/train.{i}.en.gz") for i in range(1, 6)),
        licence=MULTI30K_LICENCE, homepage="https://github.com/multi30k/dataset",
    ),
    *(
        Source(
            name=f"multi30k-en-{lang}", kind="train", description=f"Multi30k task 1 train, English-{lang}",
            outputs=(f"train/bitext/multi30k-en-{lang}.tsv.gz",),
            remotes=(_multi30k("task1/raw/train.en.gz"), _multi30k(f"task1/raw/train.{lang}.gz")),
            licence=MULTI30K_LICENCE, homepage="https://github.com/multi30k/dataset",
        )
        for lang in ("de", "fr", "cs")
    ),
    *(
        Source(
            name=f"tatoeba-en-{short}", kind="train", description=f"Tatoeba English-{short} sentence pairs",
            outputs=(f"train/bitext/tatoeba-en-{short}.tsv.gz",),
            remotes=(remote,), options={"member": f"{lang}.txt"},
            licence=ANKI_LICENCE, homepage="https://www.manythings.org/anki/",
        )
        for short, lang, remote in (
            ("es", "spa", Remote(
                "tatoeba/spa-eng-tf.zip", ("https://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip",),
                fallback=_anki("spa"), note="TensorFlow's fixed snapshot of the Anki export (spa-eng/spa.txt)")),
            ("fr", "fra", Remote(
                "tatoeba/fra-eng-tf.zip", ("https://storage.googleapis.com/download.tensorflow.org/data/fra-eng.zip",),
                fallback=_anki("fra"), note="TensorFlow's fixed snapshot of the Anki export (fra.txt, 167,130 "
                "lines: the count behind ../shared/data's tatoeba-en-fr)")),
            ("de", "deu", _anki("deu")),
        )
    ),
    Source(
        name="paranmt5m", kind="train",
        description="A seeded random sample of the ParaNMT-5M processed release (lower-cased, tokenised pairs)",
        outputs=("train/paranmt5m-sample-10k.tsv.gz",),
        remotes=(Remote(
            "paranmt/para-nmt-5m-processed.zip", (_gdrive("19NQ87gEFYu3zOIp_VNYQZgmnwRuSIyJd"),),
            note="Google Drive copy of para-nmt-5m-processed.zip (linked from the authors' page and used by later "
            "work); checked on download: it must hold para-nmt-5m-processed.txt",
        ),),
        options={"member": "para-nmt-5m-processed.txt"},
        licence="Derived from CzEng 1.6: non-commercial research and educational use only",
        homepage=PARANMT_HOMEPAGE,
    ),
)

SOURCES: dict[str, Source] = {s.name: s for s in (*EVAL_SOURCES, *TRAIN_SOURCES)}
EVAL_FOLDERS: dict[str, str] = {
    out.removeprefix("eval/"): s.name for s in EVAL_SOURCES for out in s.outputs
}
"""Evaluation folder (below ``eval/``, as the readers name it) -> the source that installs it."""


def all_remotes(source: Source) -> list[Remote]:
    """The source's remotes with their fallbacks (each once)."""
    seen: dict[str, Remote] = {}
    for remote in source.remotes:
        item: Remote | None = remote
        while item is not None:
            seen.setdefault(item.key, item)
            item = item.fallback
    return list(seen.values())
