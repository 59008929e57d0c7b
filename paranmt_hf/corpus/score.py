"""Add ``paraphrase_score`` (cosine under a paranmt_hf model) and ``trigram_overlap`` to any pair corpus.

Both columns are defined once, in :data:`paranmt_hf.corpus.measures.MEASURES` (``cosine_scores`` lives there).

This is "build your own ParaNMT": back-translate the non-English side of your bitext, pair the translations with the
English references, and score them like ParaNMT-50M (whose score is the cosine of averaged PARAGRAM-PHRASE
embeddings; any paranmt_hf encoder can play that role). :class:`AnnotateStep` does it chunk by chunk for
``paranmt-hf corpus annotate`` (each task loads the model once; memory stays bounded by a chunk).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..data.writer import format_numbers
from .errors import MissingScoreError
from .measures import cosine_scores
from .overlap import overlaps_many
from .parts import TsvPartWriter, encode_lines, is_gzip_name
from .runner import RunOptions, Stage, Summary, execute, make_spec, merge_stage
from .steps import CorpusStep


def annotate_pairs(
    records: Iterable[Mapping[str, Any]],
    encoder: Any | None = None,
    overlap: bool = True,
    tokenizer: str = "nltk",
    chunk_size: int = 8192,
    batch_size: int = 1024,
) -> Iterator[dict[str, Any]]:
    """Yield each record with ``score`` (replaced by the model's cosine when ``encoder`` is given) and ``overlap``.

    Args:
        records: dicts with ``text_a``/``text_b`` (and optional ``score``/``overlap``), e.g. from
            :func:`paranmt_hf.corpus.records.iter_records`.
        encoder: a :class:`paranmt_hf.ParaNMTEncoder` (anything with ``encode(texts, batch_size, normalize,
            show_progress_bar)``); None keeps the records' own scores.
        overlap: add the papers' trigram overlap when the record has none.
        tokenizer: overlap tokenizer (``"nltk"`` or ``"whitespace"``).
        chunk_size: records embedded together (memory stays bounded by one chunk).
        batch_size: encoder batch size.
    """
    iterator = iter(records)
    while chunk := [dict(r) for r in itertools.islice(iterator, chunk_size)]:
        if encoder is not None:
            scores = cosine_scores(encoder, [r["text_a"] for r in chunk], [r["text_b"] for r in chunk], batch_size)
            for record, score in zip(chunk, scores, strict=True):
                record["score"] = float(score)
        if overlap:
            todo = [r for r in chunk if r.get("overlap") is None]
            values = overlaps_many([r["text_a"] for r in todo], [r["text_b"] for r in todo], tokenizer)
            for record, value in zip(todo, values, strict=True):
                record["overlap"] = value
        yield from chunk


class AnnotateStep(CorpusStep):
    """Score (model cosine) and overlap for the pairs of each batch; its output is the output lines as bytes.

    Output columns: ``text_a, text_b, score[, overlap]`` (the ``para-nmt-50m.txt`` format plus the overlap).
    Without ``model`` each pair keeps its own score (a line without one is an error).
    """

    name = "annotate"

    def __init__(self, model: str | os.PathLike[str] | None = None, overlap: bool = True, tokenizer: str = "nltk",
                 batch_size: int = 8192, compress: bool = False) -> None:
        super().__init__()
        self.model = None if model is None else os.fspath(model)
        self.overlap, self.tokenizer, self.batch_size, self.compress = overlap, tokenizer, batch_size, compress

    def setup(self, rank: int, world_size: int) -> None:
        """Load the model and the tokenizer (once per task)."""
        self._encoder = None
        if self.model is not None:
            from ..model.encoder import ParaNMTEncoder

            self._encoder = ParaNMTEncoder.from_pretrained(self.model)
        if self.overlap and self.tokenizer == "nltk":
            from .tokens import shared_tokenizer

            shared_tokenizer()

    def process(self, batch: Any) -> Any:
        """The batch with its annotated lines as output."""
        parsed = batch.parsed
        a, b = parsed.text_a, parsed.text_b
        if self._encoder is not None:
            scores = cosine_scores(self._encoder, a, b, self.batch_size, num_processes=1).tolist()
        else:
            scores = parsed.score
            if any(s is None for s in scores):
                line = parsed.numbers[scores.index(None)]
                raise MissingScoreError(f"{batch.source}:{line}: no score to keep: pass --model to score the pairs")
        columns = [a, b, format_numbers(scores)]
        if self.overlap:
            overlap = list(parsed.overlap)
            todo = [i for i, v in enumerate(overlap) if v is None]
            for i, value in zip(todo, overlaps_many([a[i] for i in todo], [b[i] for i in todo], self.tokenizer),
                                strict=True):
                overlap[i] = value
            columns.append(format_numbers(overlap))
        batch.output = encode_lines(list(map("\t".join, zip(*columns, strict=True))), self.compress)
        self.count({"annotated": len(parsed)})
        return batch


def annotate_corpus(inputs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str],
                    model: str | os.PathLike[str] | None = None, run: RunOptions | None = None, *,
                    fmt: str = "pairs", strict: bool = False, overlap: bool = True, tokenizer: str = "nltk",
                    batch_size: int = 8192, member_pattern: str | None = None, overwrite: bool = False) -> Summary:
    """Write ``text_a, text_b, score[, overlap]`` for every valid pair of ``inputs`` (see :class:`AnnotateStep`).

    Args:
        inputs: pair files.
        output: TSV(.gz) output (atomic; never an input; an existing one only with ``overwrite``).
        model: paranmt_hf model directory or Hub id whose cosine becomes the score (None: keep the file's scores).
        run: tasks, workers, executor, progress.
        fmt: line format of the inputs.
        strict: fail on the first bad line.
        overlap: add the trigram overlap column.
        tokenizer: overlap tokenizer (``"nltk"``: the papers'; ``"whitespace"``).
        batch_size: sentences per forward pass.
        member_pattern: zip member glob.
        overwrite: replace an existing output.
    """
    from .filtering import merge_tsv, part_suffix

    run = run or RunOptions()
    suffix = part_suffix(output)
    settings = {"model": None if model is None else os.fspath(model), "format": fmt, "member": member_pattern,
                "overlap": overlap, "tokenizer": tokenizer, "strict": strict}
    spec, workers = make_spec("annotate", inputs, output, run, overwrite,
                              {"settings": settings, "part_suffix": suffix, "reading_stage": "main"})
    stages = [Stage("main", [spec.reader("main", fmt, strict, member_pattern),
                             AnnotateStep(model, overlap, tokenizer, batch_size, is_gzip_name(output)),
                             TsvPartWriter(spec.parts_dir(), suffix)]),
              merge_stage(merge_tsv, spec)]
    return execute(spec, stages, run, workers)
