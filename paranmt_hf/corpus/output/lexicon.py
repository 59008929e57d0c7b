"""Paraphrase lexicon from sentence pairs (ParaNMT-50M, ACL 2018, appendix A.1).

Cross-sentence PMI counts a joint event ``(u, v)`` when ``u`` is in a sentence and ``v`` in its paraphrase::

    PMI_cross(u, v) = log P_cross(u, v) - log P(u) - log P(v)
    PMI_adj(u, v)   = PMI_cross(u, v) - PMI(u, v)

where ``PMI`` is the ordinary single-sentence PMI, averaged over the two sides (as the paper). Probabilities are
event frequencies over sentences (words counted once per sentence), ``P_cross`` over both directions of every
pair, so independent words score 0. The ordinary PMI uses add-``smoothing`` counts so that words that never share
a sentence get a finite adjustment. The paper's pair filter (score >= 0.35, sides <= 30 tokens) is ``min_score``,
``max_tokens``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...data.simlex import read_simlex

SCORES = ("adjusted", "cross")


def _types(text: str, lowercase: bool) -> list[str]:
    return sorted(set((text.lower() if lowercase else text).split()))


@dataclass
class ParaphraseLexicon:
    """Word-pair counts from a pair corpus, scored by cross-sentence or adjusted PMI.

    Build with :meth:`from_pairs`. ``targets`` (if set) restricts the first word ``u`` of the counted pairs, which
    bounds memory on large corpora (e.g. the SimLex-999 vocabulary, or the words you want paraphrases of).
    """

    sentences: int = 0
    pairs: int = 0
    doc_freq: Counter[str] = field(default_factory=Counter)
    cross: Counter[tuple[str, str]] = field(default_factory=Counter)
    within: list[Counter[tuple[str, str]]] = field(default_factory=lambda: [Counter(), Counter()])
    side_sentences: list[int] = field(default_factory=lambda: [0, 0])
    side_freq: list[Counter[str]] = field(default_factory=lambda: [Counter(), Counter()])
    smoothing: float = 1.0

    @classmethod
    def from_pairs(
        cls,
        records: Iterable[Mapping[str, Any]],
        targets: Iterable[str] | None = None,
        min_score: float | None = 0.35,
        max_tokens: int | None = 30,
        lowercase: bool = True,
        smoothing: float = 1.0,
    ) -> ParaphraseLexicon:
        """Count a pair corpus (records with ``text_a``, ``text_b`` and an optional ``score``).

        Args:
            records: the pairs (pairs without a score pass the ``min_score`` test; a NaN score fails it).
            targets: words to collect paraphrases for (None: every word; memory grows with the corpus).
            min_score: drop pairs scored below this (None: keep all).
            max_tokens: drop pairs with a side longer than this many whitespace tokens (None: keep all).
            lowercase: lower-case words.
            smoothing: add-k pseudo-count of the ordinary (single-sentence) PMI.
        """
        lex = cls(smoothing=smoothing)
        wanted = None if targets is None else {t.lower() if lowercase else t for t in targets}
        for record in records:
            score = record.get("score")
            if min_score is not None and score is not None and not score >= min_score:  # NaN is dropped too
                continue
            sides = [record["text_a"], record["text_b"]]
            if max_tokens is not None and any(len(s.split()) > max_tokens for s in sides):
                continue
            types = [_types(s, lowercase) for s in sides]
            lex.pairs += 1
            for side, words in enumerate(types):
                lex.sentences += 1
                lex.side_sentences[side] += 1
                lex.doc_freq.update(words)
                lex.side_freq[side].update(words)
                firsts = words if wanted is None else [w for w in words if w in wanted]
                lex.within[side].update((u, v) for u in firsts for v in words if u != v)
                other = types[1 - side]
                lex.cross.update((u, v) for u in firsts for v in other)
        return lex

    def cross_pmi(self, u: str, v: str) -> float | None:
        """Cross-sentence PMI of ``(u, v)``; None when they never co-occur across a pair."""
        # cross[(u, v)] counts both directions of every pair already; (v, u) holds the same count when both are targets
        joint = self.cross.get((u, v)) or self.cross.get((v, u), 0)
        if not joint:
            return None
        n = self.sentences
        p_u, p_v = self.doc_freq[u] / n, self.doc_freq[v] / n
        return math.log(joint / (2 * self.pairs)) - math.log(p_u) - math.log(p_v)

    def ordinary_pmi(self, u: str, v: str) -> float:
        """Single-sentence PMI (add-k smoothed), averaged over the two sides of the pairs."""
        values = []
        for side in (0, 1):
            n = self.side_sentences[side]
            fu, fv = self.side_freq[side][u], self.side_freq[side][v]
            if not n or not fu or not fv:
                continue
            within = self.within[side]
            joint = (within.get((u, v)) or within.get((v, u), 0)) + self.smoothing
            values.append(math.log(joint * n / ((fu + self.smoothing) * (fv + self.smoothing))))
        return sum(values) / len(values) if values else 0.0

    def score(self, u: str, v: str, kind: str = "adjusted") -> float | None:
        """``"adjusted"`` or ``"cross"`` PMI of a word pair; None when unseen across pairs."""
        if kind not in SCORES:
            raise ValueError(f"unknown score {kind!r}; choose one of {SCORES}")
        cross = self.cross_pmi(u, v)
        if cross is None or kind == "cross":
            return cross
        return cross - self.ordinary_pmi(u, v)

    def top(self, word: str, k: int = 20, kind: str = "adjusted", min_count: int = 1) -> list[tuple[str, float]]:
        """The ``k`` best-scored paraphrases of ``word`` seen at least ``min_count`` times across pairs."""
        counts: Counter[str] = Counter()
        for (u, v), c in self.cross.items():  # (word, x) and (x, word) hold the same symmetric count
            if u != v and word in (u, v):
                counts[v if u == word else u] = c
        scored = [(v, self.score(word, v, kind)) for v, c in counts.items() if c >= min_count]
        return sorted(((v, s) for v, s in scored if s is not None), key=lambda x: -x[1])[:k]


def evaluate_simlex(lexicon: ParaphraseLexicon, path: str, kind: str = "adjusted") -> dict[str, Any]:
    """Spearman's rho between the lexicon's scores and SimLex-999.

    ``spearman_all`` scores all 999 pairs, unseen pairs getting the lowest seen score (no evidence = least
    similar); ``spearman_covered`` uses only the pairs seen across sentence pairs.
    """
    from ...utils.imports import require

    stats = require("scipy.stats", "eval")
    rows = read_simlex(path)
    scores = [lexicon.score(w1, w2, kind) for w1, w2, _ in rows]
    seen = [s for s in scores if s is not None]
    result: dict[str, Any] = {"pairs": len(rows), "covered": len(seen), "score": kind}
    if len(seen) < 3:
        return {**result, "spearman_all": float("nan"), "spearman_covered": float("nan")}
    fill = min(seen)
    gold = [g for _, _, g in rows]
    result["spearman_all"] = float(stats.spearmanr([fill if s is None else s for s in scores], gold).statistic)
    covered = [(s, g) for s, g in zip(scores, gold, strict=True) if s is not None]
    result["spearman_covered"] = float(stats.spearmanr(*zip(*covered, strict=True)).statistic)
    return result


def lexicon_report(inputs: Iterable[str], words: Iterable[str] = (), *, top: int = 20, kind: str = "adjusted",
                   min_count: int = 1, min_score: float = 0.35, max_tokens: int = 30, simlex: str | None = None,
                   output: str | None = None, fmt: str = "pairs", strict: bool = False,
                   member_pattern: str | None = None, progress: bool = True,
                   overwrite: bool = False) -> dict[str, Any]:
    """The lexicon of the pairs in ``inputs``: the ``top`` paraphrases of each word, SimLex-999's rho, as a dict.

    Only the words asked for (and SimLex's) are counted. ``output``: also written as JSON (checked before the work
    and written atomically; never an input, an existing file only with ``overwrite``).

    Returns:
        ``{"pairs_used": n, "top": {word: [(paraphrase, score), ...]}, "simlex": {"cross": ..., "adjusted": ...}}``
        (``top`` with words, ``simlex`` with ``simlex``).
    """
    from ...utils.atomic import atomic_write_json, check_output
    from ..pipeline.progress import iter_records_progress

    inputs, words = list(inputs), list(words)
    if output:
        check_output(output, inputs, overwrite)
    targets = set(words) | ({w for row in read_simlex(simlex) for w in row[:2]} if simlex else set())
    records = iter_records_progress(inputs, fmt, strict=strict, member_pattern=member_pattern, desc="lexicon",
                                    progress=progress)
    lexicon = ParaphraseLexicon.from_pairs(records, targets=targets or None, min_score=min_score,
                                           max_tokens=max_tokens)
    report: dict[str, Any] = {"pairs_used": lexicon.pairs}
    if words:
        report["top"] = {word: lexicon.top(word.lower(), top, kind, min_count) for word in words}
    if simlex:
        report["simlex"] = {score: evaluate_simlex(lexicon, simlex, score) for score in ("cross", "adjusted")}
    if output:
        atomic_write_json(output, report, overwrite=overwrite)
    return report
