"""Add ``paraphrase_score`` (cosine under a paranmt_hf model) and ``trigram_overlap`` to any pair corpus.

Both columns are defined once, in :data:`paranmt_hf.corpus.measures.registry.MEASURES` (``cosine_scores`` lives there).

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
from .errors import MissingColumnError, MissingScoreError, first_unscored, option
from .measures.columns import TEXT_EXTRA
from .measures.overlap import overlaps_many
from .measures.registry import MeasureContext, compute_measures, cosine_scores
from .pipeline.parts import TsvPartWriter
from .pipeline.runner import JobOptions, RunOptions, Stage, Summary, execute, make_spec, merge_stage
from .pipeline.steps import CorpusStep


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
        encoder: a :class:`paranmt_hf.ParaNMTEncoder` (anything with ``encode(texts, batch_size, normalize_embeddings,
            show_progress_bar)``); None keeps the records' own scores.
        overlap: add the papers' trigram overlap when the record has none.
        tokenizer: overlap tokenizer (``"nltk"``, ``"fast"`` or ``"whitespace"``).
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
    """Add columns to the pairs of each batch; its output is the output lines as bytes.

    Without ``columns`` (the para-nmt-50m.txt layout): ``text_a, text_b, score[, overlap]``, the score being the
    model's cosine (``paraphrase_score``) or, without a model, the line's own score (a line without one is an
    error). With ``columns`` (a file with a header, :mod:`paranmt_hf.corpus.measures.columns`): the two texts and then
    ``columns`` in order, each taken from the line or computed through
    :data:`~paranmt_hf.corpus.measures.registry.MEASURES` (``compute``: the ones computed even when the line has them).

    Args:
        context: what the measures need (the scoring model, a language model, a classifier, the tokenizer).
        overlap: legacy layout: add the trigram overlap column.
        columns: named layout: the output's columns after the two texts.
        compute: the columns computed from the texts (the others are copied from the input).
    """

    name = "annotate"

    def __init__(self, context: MeasureContext, overlap: bool = True, columns: Sequence[str] | None = None,
                 compute: Sequence[str] = ()) -> None:
        super().__init__()
        self.context, self.overlap = context, overlap
        self.columns = None if columns is None else tuple(columns)
        self.compute = tuple(compute)

    def setup(self, rank: int, world_size: int) -> None:
        """Load the models the columns need and the tokenizer (once per task)."""
        from .measures.registry import get_measure

        names = self.compute if self.columns is not None else \
            (("paraphrase_score",) if self.context.encoder is not None else ()) + \
            (("trigram_overlap",) if self.overlap else ())
        for name in names:
            for item in get_measure(name).needs:
                self.context.get(item)
        if any("overlap" in n or n == "lm_perplexity" for n in names):
            from .text.tokens import warm_up_tokenizer

            warm_up_tokenizer(self.context.tokenizer)

    def process(self, batch: Any) -> Any:
        """The batch with its annotated lines as output (and the new columns in ``batch.columns``)."""
        parsed = batch.parsed
        a, b = parsed.text_a, parsed.text_b
        if self.columns is None:
            lines = self._legacy(batch)
        else:
            given: dict[str, Any] = dict(batch.columns)
            given["paraphrase_score"] = parsed.score
            given["trigram_overlap"] = parsed.overlap
            values = compute_measures([n for n in self.columns if n in self.compute], a, b, self.context)
            out = [a, b]
            for name in self.columns:
                if name in values:
                    column = values[name].tolist()
                    batch.columns[name] = column
                    out.append(format_numbers(column))
                elif name in TEXT_EXTRA:
                    out.append(given[name])
                else:
                    column = given.get(name)
                    if column is None or any(v is None for v in column):
                        raise MissingColumnError(f"{batch.source}: no {name} to keep (the input has none and it is "
                                                 "not computed)")
                    out.append(format_numbers(column))
            lines = list(map("\t".join, zip(*out, strict=True)))
            if "paraphrase_score" in values:
                parsed.score = batch.columns.pop("paraphrase_score")
            if "trigram_overlap" in values:
                parsed.overlap = batch.columns.pop("trigram_overlap")
        parsed.lines = lines  # the steps after this one see the annotated lines
        self.count({"annotated": len(parsed)})
        return batch

    def _legacy(self, batch: Any) -> list[str]:
        parsed = batch.parsed
        a, b = parsed.text_a, parsed.text_b
        if self.context.encoder is not None:
            scores = compute_measures(["paraphrase_score"], a, b, self.context)["paraphrase_score"].tolist()
        else:
            scores = parsed.score
            line = first_unscored(parsed.numbers, scores)
            if line is not None:
                raise MissingScoreError(f"{batch.source}:{line}: no score to keep: pass "
                                        f"{option('--model', 'a model')} to score the pairs")
        columns = [a, b, format_numbers(scores)]
        if self.overlap:
            overlap = list(parsed.overlap)
            todo = [i for i, v in enumerate(overlap) if v is None]
            for i, value in zip(todo, overlaps_many([a[i] for i in todo], [b[i] for i in todo],
                                                    self.context.tokenizer), strict=True):
                overlap[i] = value
            columns.append(format_numbers(overlap))
        return list(map("\t".join, zip(*columns, strict=True)))


def annotate_corpus(inputs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str],
                    model: str | os.PathLike[str] | None = None, run: RunOptions | None = None, *,
                    measures: Sequence[str] = (), fmt: str = "pairs", strict: bool = False, overlap: bool = True,
                    tokenizer: str = "nltk", batch_size: int = 8192, member_pattern: str | None = None,
                    language_model: str | None = None, classifier: str | None = None,
                    langid_model: str | None = None, trust_remote_code: bool = False,
                    overwrite: bool = False) -> Summary:
    """Add columns to every valid pair of ``inputs`` (see :class:`AnnotateStep`).

    Args:
        inputs: pair files; without a header they are read as the para-nmt-50m.txt layout.
        output: TSV(.gz) output (atomic; never an input; an existing one only with ``overwrite``).
        model: paranmt_hf model (folder or Hub id) whose cosine becomes ``paraphrase_score`` (None: keep the scores).
        run: tasks, workers, executor, progress.
        measures: more columns of :data:`~paranmt_hf.corpus.measures.registry.MEASURES` (e.g. ``bleu``).
        fmt: line format of inputs without a header.
        strict: fail on the first bad line.
        overlap: add the trigram overlap column.
        tokenizer: overlap tokenizer (``"nltk"``: the papers'; ``"whitespace"``).
        batch_size: sentences per forward pass of the scoring model.
        member_pattern: zip member glob.
        language_model: the KenLM model ``lm_perplexity`` needs.
        classifier: the reference classifier ``reference_probability`` needs.
        langid_model: the fastText model ``english`` needs (default: the bundled lid.176.ftz).
        trust_remote_code: passed when loading the scoring model.
        overwrite: replace an existing output.
    """
    from .measures.columns import common_header, header_of
    from .measures.registry import MeasureContext, get_measure
    from .pipeline.parts import merge_tsv, part_suffix

    run = run or RunOptions()
    for name in measures:
        spec = get_measure(name)
        if spec.compute is None:
            raise ValueError(f"{name} cannot be computed from the texts: it comes from {spec.given_by}")
    if model is not None:
        from ..model.locate import locate_model

        locate_model(model)  # one that is not there stops the command now, before a work folder exists
    header = common_header(inputs, member_pattern)
    context = MeasureContext(tokenizer=tokenizer, encoder=None if model is None else os.fspath(model),
                             language_model=language_model, classifier=classifier, langid_model=langid_model,
                             batch_size=batch_size, trust_remote_code=trust_remote_code)
    columns = compute = None
    out_header = None
    if header is not None or measures:
        given = [] if header is None else [c for c in header.columns[2:]]
        given = ["paraphrase_score" if c == "score" else "trigram_overlap" if c == "overlap" else c for c in given]
        compute = [*(["paraphrase_score"] if model is not None else []),
                   *(["trigram_overlap"] if overlap and "trigram_overlap" not in given else []), *measures]
        columns = list(dict.fromkeys([*given, *compute]))
        out_header = header_of(columns).line
    suffix = part_suffix(output)
    settings = {"model": None if model is None else os.fspath(model), "format": fmt, "member": member_pattern,
                "overlap": overlap, "tokenizer": tokenizer, "strict": strict, "measures": list(measures),
                "language_model": language_model, "classifier": classifier}
    spec, workers = make_spec("annotate", inputs, output, run, overwrite,
                              JobOptions(settings, part_suffix=suffix, header=out_header),
                              protected=context.model_paths())
    stages = [Stage("main", [spec.reader("main", fmt, strict, member_pattern, header),
                             AnnotateStep(context, overlap, columns, compute or ()),
                             TsvPartWriter(spec.parts_dir(), suffix)]),
              merge_stage(merge_tsv, spec)]
    return execute(spec, stages, run, workers)
