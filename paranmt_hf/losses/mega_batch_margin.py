"""The mega-batch margin loss of Wieting & Gimpel (ParaNMT-50M, ACL 2018; Paraphrastic Representations at Scale)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch import Tensor, nn

from .features import Rows, features_from_rows, hash_rows, is_flat, rows_from_features
from .mining import CANDIDATES, SAMPLING, allowed_candidates, other_language, select_negatives
from .pool import INPUT_KEYS, PoolEntry, gather_entry, make_entry, unit_rows


def stochastic_forward(model: nn.Module) -> bool:
    """Whether ``model``'s forward draws random numbers now: an active dropout, or word scrambling (ParaNMT's)."""
    for module in model.modules():
        if not module.training:
            continue
        if isinstance(module, nn.modules.dropout._DropoutNd) and module.p > 0:
            return True
        if float(getattr(module, "scramble_rate", 0.0) or 0.0) > 0:
            return True
    return False


class MegaBatchMarginLoss(nn.Module):
    r"""Margin loss with hard negatives mined from a mega-batch of ``megabatch_size`` mini-batches.

    For a pair (s, t) with negatives t' (for s) and s' (for t), the loss is

    .. math::
        [\delta - \cos(s, t) + \cos(s, t')]_+ + [\delta - \cos(s, t) + \cos(t, s')]_+

    averaged over the pairs of the mini-batch. t' is the sentence of the mega-batch most similar to s (``MAX``),
    a random one (``RAND``) or either with probability 1/2 (``MIX``), never a sentence of s's own pair nor a
    text identical to s or t; s' likewise for t. The optimizer steps once per mini-batch, as in the papers.

    The Trainer gives one mini-batch per step, so the loss keeps a pool of the ``megabatch_size - 1`` previous
    mini-batches and mines among it and the current one (a sliding window; embeddings at most M - 1 steps old, as
    in the papers; ``refresh_pool=True`` re-encodes the pool every step). Chosen negatives are encoded again with
    gradient. Optional labels (1: translation pair, English first; 0: paraphrase) apply PRAS's bitext rule pair
    by pair; ``anneal`` grows the mega-batch (PRAS); ``gather_across_devices`` mines over every process.
    In eval mode the pool is unchanged; :meth:`training_state` holds the pool and annealing clock for resuming.

    Args:
        model: the SentenceTransformer to train (padded or flat ``StaticEmbedding``-style features).
        margin: the margin delta (0.4 in both papers).
        megabatch_size: M, mini-batches per mega-batch (ParaNMT-50M: 40; PRAS: 100; 1 = in-batch negatives).
        anneal: grow the mega-batch by one mini-batch every ``anneal`` mini-batches (PRAS: 150); ``None``
            uses ``megabatch_size`` from the first step.
        sampling: ``"MAX"`` (hardest), ``"MIX"`` or ``"RAND"``.
        candidates: ``"both"`` (any sentence; ParaNMT-50M, paraphrase data) or ``"other_side"`` (anchors take
            negatives among positives and vice versa; PRAS's code, bitext), for pairs without labels.
        refresh_pool: re-encode the pool with the current parameters before mining at every step.
        gather_across_devices: under torch.distributed, mine negatives over the mini-batches of all processes.

    References:
        - ParaNMT-50M: Pushing the Limits of Paraphrastic Sentence Embeddings with Millions of Machine
          Translations (Wieting & Gimpel, ACL 2018): https://aclanthology.org/P18-1042
        - Paraphrastic Representations at Scale (Wieting et al., 2021): https://arxiv.org/abs/2104.15114

    Requirements:
        1. (anchor, positive) pairs of paraphrases or translations (English first); optionally a ``label`` column
           of pair kinds (1 translation, 0 paraphrase).
        2. Shuffled data: the mega-batch is made of consecutive mini-batches.

    Inputs:
        +---------------------------------------+-----------------------------------------------+
        | Texts                                 | Labels                                        |
        +=======================================+===============================================+
        | (anchor, positive) pairs              | none, or 1 (translation) / 0 (paraphrase)     |
        +---------------------------------------+-----------------------------------------------+

    Recommendations:
        - Batch size 100-128 with M = 40-100; averaging encoders learn fast with Adam at lr 1e-3 (PRAS).
        - ``BatchSamplers.NO_DUPLICATES`` is not needed: identical texts are never taken as negatives.

    Relations:
        - Unlike ``sentence_transformers``' ``MegaBatchMarginLoss`` (two fixed margins, one direction, in-batch
          negatives only), this is the papers' one-margin ranking loss in both directions over M mini-batches;
          hyper-parameters of one do not carry over.
        - ``MultipleNegativesRankingLoss`` uses every in-batch negative with a softmax; this loss uses one hard
          negative per sentence, with no temperature.

    Example:
        ::

            from datasets import Dataset
            from sentence_transformers import (
                SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments,
            )
            from paranmt_hf import MegaBatchMarginLoss, ParaNMTInputModule, build_encoder

            pairs = Dataset.from_dict({
                "anchor": ["a man plays a guitar .", "a dog runs .", "the cat sleeps .", "kids play ."],
                "positive": ["a guy plays guitar .", "a dog is running .", "a cat is asleep .", "children play ."],
            })
            encoder = build_encoder("word", corpus=[*pairs["anchor"], *pairs["positive"]], embedding_dim=32)
            model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)])
            loss = MegaBatchMarginLoss(model, margin=0.4, megabatch_size=2, sampling="MAX")
            args = SentenceTransformerTrainingArguments(
                output_dir="out", per_device_train_batch_size=2, learning_rate=1e-3, num_train_epochs=1,
                use_cpu=True, report_to="none", save_strategy="no",
            )
            SentenceTransformerTrainer(model=model, args=args, train_dataset=pairs, loss=loss).train()
    """

    def __init__(
        self,
        model: nn.Module,
        margin: float = 0.4,
        megabatch_size: int = 40,
        anneal: int | None = None,
        sampling: str = "MAX",
        candidates: str = "both",
        refresh_pool: bool = False,
        gather_across_devices: bool = False,
    ) -> None:
        super().__init__()
        if sampling not in SAMPLING:
            raise ValueError(f"sampling={sampling!r} is not one of {SAMPLING}")
        if candidates not in CANDIDATES:
            raise ValueError(f"candidates={candidates!r} is not one of {CANDIDATES}")
        if megabatch_size < 1:
            raise ValueError(f"megabatch_size must be >= 1, got {megabatch_size}")
        if anneal is not None and anneal < 1:
            raise ValueError(f"anneal must be None or >= 1, got {anneal}")
        self.model = model
        self.margin = float(margin)
        self.megabatch_size = int(megabatch_size)
        self.anneal = anneal
        self.sampling = sampling
        self.candidates = candidates
        self.refresh_pool = bool(refresh_pool)
        self.gather_across_devices = bool(gather_across_devices)
        self.steps = 0
        self.pool: deque[PoolEntry] = deque(maxlen=max(self.megabatch_size - 1, 0))

    @property
    def current_megabatch_size(self) -> int:
        """M for the next training mini-batch (grows with annealing)."""
        if self.anneal is None:
            return self.megabatch_size
        return min(self.megabatch_size, 1 + self.steps // self.anneal)

    def training_state(self) -> dict[str, Any]:
        """The state a resumed run needs: the annealing clock and the pool, pair kinds included (CPU tensors only)."""
        pool = [
            {
                "ids": [r.ids.cpu() for r in entry.rows],
                "lengths": [r.lengths.cpu() for r in entry.rows],
                "units": [u.cpu() for u in entry.units],
                "translation": None if entry.translation is None else entry.translation.cpu(),
            }
            for entry in self.pool
        ]
        return {"steps": int(self.steps), "pool": pool}

    def load_training_state(self, state: dict[str, Any], device: torch.device | str = "cpu") -> None:
        """Restore what :meth:`training_state` returned (tensors moved to ``device``)."""
        self.steps = int(state["steps"])
        self.pool.clear()
        for item in state["pool"]:
            rows = tuple(Rows(i.to(device), n.to(device)) for i, n in zip(item["ids"], item["lengths"], strict=True))
            units = tuple(u.to(device) for u in item["units"])
            hashes = tuple(hash_rows(r) for r in rows)  # from the rows: a state's own (older) hashes may differ
            kinds = item.get("translation")
            self.pool.append(PoolEntry(rows, units, hashes, None if kinds is None else kinds.to(device)))

    def forward(self, sentence_features: Iterable[dict[str, Any]], labels: Tensor | None = None) -> Tensor:
        """Embed the pairs, mine negatives over the mega-batch, embed the negatives and return the loss.

        With a deterministic training forward (no active dropout or word scrambling) and flat features, the step
        has one forward pass with gradient, so its backward pass builds one embedding gradient instead of three to
        add up (adding sparse gradients costs more than computing them). With ``megabatch_size=1`` (not gathered
        across devices, no refresh) the pairs are their own negatives; with a pool the pairs are first embedded
        without gradient for mining, then pairs and negatives go through one pass with gradient (the same values:
        a sentence's embedding does not depend on the rest of its batch). Otherwise: three passes with gradient.
        """
        features = list(sentence_features)
        if len(features) != 2:
            raise ValueError(
                f"MegaBatchMarginLoss takes (anchor, positive) pairs: 2 text columns, got {len(features)}. "
                "Negatives are mined from the mega-batch; drop extra columns."
            )
        inputs = [{k: v for k, v in f.items() if k in INPUT_KEYS or not isinstance(v, Tensor)} for f in features]
        training = bool(getattr(self.model, "training", True)) and torch.is_grad_enabled()
        keep = self.current_megabatch_size - 1 if training else 0
        gathered = training and self.gather_across_devices
        # a forward that draws no random numbers embeds a sentence the same in any batch: one pass with gradient
        deterministic = training and all(is_flat(f) for f in inputs) and not stochastic_forward(self.model)
        # no pool ever (M = 1, annealing or not): every negative is a sentence of this mini-batch
        one_pass = deterministic and self.megabatch_size == 1 and not gathered and not self.refresh_pool
        joint = deterministic and not one_pass  # pairs embedded for mining first, then with their negatives
        pair_rows = [rows_from_features(f) for f in inputs] if deterministic else None
        if deterministic:  # one pass over both columns; for mining only (no gradient) when the negatives come later
            with torch.no_grad() if joint else nullcontext():
                embedded = self.model(features_from_rows(Rows.cat(pair_rows), inputs[0]))["sentence_embedding"]
            anchors, positives = embedded.split(len(pair_rows[0]))
        else:
            anchors = self.model(features[0])["sentence_embedding"]
            positives = self.model(features[1])["sentence_embedding"]
        local = make_entry(inputs, anchors, positives, self._pair_kinds(labels, len(anchors), anchors.device),
                           rows=pair_rows)
        entry, offset = gather_entry(local) if gathered else (local, 0)
        previous = list(self.pool)[-keep:] if keep else []
        pool = [*previous, entry]
        if training and self.refresh_pool:
            pool = self._refreshed(pool, inputs[0])
        start = sum(len(e) for e in pool[:-1]) + offset
        own = torch.arange(len(local), device=anchors.device) + start
        index, has_negative, candidate_rows = self._mine(pool, own)
        if joint:
            rows = Rows.cat([*pair_rows, candidate_rows.select(index)])
            embedded = self.model(features_from_rows(rows, inputs[0]))["sentence_embedding"]
            anchors, positives, negatives = embedded.split([len(local), len(local), 2 * len(local)])
        elif training and not one_pass:
            negative_features = features_from_rows(candidate_rows.select(index), inputs[0])
            negatives = self.model(negative_features)["sentence_embedding"]
        else:  # the candidates are this mini-batch's anchors, then its positives, already embedded
            negatives = torch.cat([anchors, positives])[index]
        anchor_negatives, positive_negatives = negatives.split(len(local))
        loss = self.compute_loss_from_embeddings(
            [anchors, positives, anchor_negatives, positive_negatives], labels, has_negative=has_negative
        )
        if training:
            self.pool.append(entry)
            self.steps += 1
        return loss

    @staticmethod
    def _pair_kinds(labels: Tensor | None, pairs: int, device: torch.device) -> Tensor | None:
        """The labels as a [B] bool tensor (True: translation pair), checked; ``None`` without labels."""
        if labels is None:
            return None
        kinds = torch.as_tensor(labels, device=device).reshape(-1)
        if kinds.shape[0] != pairs or not bool(((kinds == 0) | (kinds == 1)).all()):
            raise ValueError(
                f"MegaBatchMarginLoss labels are pair kinds, one 0 (paraphrase) or 1 (translation) per pair: got "
                f"{tuple(kinds.shape)} values {sorted(set(kinds.tolist()))[:5]} for {pairs} pairs"
            )
        return kinds.bool()

    def compute_loss_from_embeddings(
        self, embeddings: list[Tensor], labels: Tensor | None = None, has_negative: Tensor | None = None
    ) -> Tensor:
        """The loss from embeddings ``[s, t, t', s']`` ([B, D] each; t' is the negative of s, s' that of t).

        Args:
            embeddings: anchors s, positives t, negatives t' of the anchors, negatives s' of the positives.
            labels: unused (no label column).
            has_negative: optional [2B] bool (anchors' negatives first): terms without a negative count as 0.

        Returns:
            ``mean_i([delta - cos(s_i, t_i) + cos(s_i, t'_i)]_+ + [delta - cos(s_i, t_i) + cos(t_i, s'_i)]_+)``.
        """
        anchors, positives, anchor_negatives, positive_negatives = embeddings
        positive_scores = F.cosine_similarity(anchors, positives, dim=-1)
        terms = torch.stack(
            [
                F.relu(self.margin - positive_scores + F.cosine_similarity(anchors, anchor_negatives, dim=-1)),
                F.relu(self.margin - positive_scores + F.cosine_similarity(positives, positive_negatives, dim=-1)),
            ]
        )
        if has_negative is not None:
            terms = terms * has_negative.view(2, -1).to(terms.dtype)
        return terms.sum(dim=0).mean()

    # ---- pool -------------------------------------------------------------------------------------------------------
    @torch.no_grad()
    def _refreshed(self, pool: list[PoolEntry], template: dict[str, Any]) -> list[PoolEntry]:
        """The pool re-encoded with the current parameters (eval mode, no gradient)."""
        was_training = self.model.training
        self.model.eval()
        try:
            fresh = []
            for entry in pool:
                units = tuple(
                    unit_rows(self.model(features_from_rows(rows, template))["sentence_embedding"])
                    for rows in entry.rows
                )
                fresh.append(PoolEntry(entry.rows, units, entry.hashes, entry.translation))
        finally:
            self.model.train(was_training)
        return fresh

    def _mine(self, pool: list[PoolEntry], own: Tensor) -> tuple[Tensor, Tensor, Rows]:
        """Mine the negatives of the local pairs (at pool positions ``own``).

        Returns the index into the candidate rows (anchors' negatives, then positives'), whether each has one, and
        the candidate rows (every anchor of the pool, then every positive).
        """
        side_rows = [Rows.cat([e.rows[c] for e in pool]) for c in (0, 1)]
        side_hashes = [torch.cat([e.hashes[c] for e in pool]) for c in (0, 1)]
        pairs = side_hashes[0].shape[0]
        units = torch.cat([e.units[c] for c in (0, 1) for e in pool])  # the candidates, copied once
        side_units = units.split(pairs)
        pair_index = torch.arange(pairs, device=own.device)
        queries = [side_units[c][own] for c in (0, 1)]
        query_hashes = [side_hashes[c][own] for c in (0, 1)]
        rows = Rows.cat(side_rows)
        translation = self._pool_kinds(pool)
        if translation is not None:  # a mixed mega-batch: PRAS's rule per pair
            allowed = allowed_candidates(
                query_hashes[0], query_hashes[1], own, torch.cat(side_hashes), torch.cat([pair_index, pair_index])
            ).repeat(2, 1)
            english = torch.zeros_like(translation)
            own_kind = translation[own]
            allowed &= other_language(
                own_kind.repeat(2), torch.cat([english[own], own_kind]), torch.cat([english, translation])
            )
            index, has_negative = select_negatives(torch.cat(queries), units, allowed, self.sampling, unit=True)
            return index, has_negative, rows
        if self.candidates == "both":
            allowed = allowed_candidates(
                query_hashes[0], query_hashes[1], own, torch.cat(side_hashes), torch.cat([pair_index, pair_index])
            )
            # one matmul for both sides: the exclusions of a pair are the same for its anchor and its positive
            index, has_negative = select_negatives(torch.cat(queries), units, allowed.repeat(2, 1), self.sampling,
                                                   unit=True)
            return index, has_negative, rows
        # other_side: anchors take positives (second half of the candidate rows), positives take anchors
        allowed = allowed_candidates(query_hashes[0], query_hashes[1], own, side_hashes[1], pair_index)
        picks = [select_negatives(queries[0], side_units[1], allowed, self.sampling, unit=True)]
        allowed = allowed_candidates(query_hashes[1], query_hashes[0], own, side_hashes[0], pair_index)
        picks.append(select_negatives(queries[1], side_units[0], allowed, self.sampling, unit=True))
        index = torch.cat([picks[0][0] + pairs, picks[1][0]])
        return index, torch.cat([picks[0][1], picks[1][1]]), rows

    def _pool_kinds(self, pool: list[PoolEntry]) -> Tensor | None:
        """Per-pair kinds of the whole pool when they mix translations and paraphrases, else ``None``.

        A pool of one kind takes the faster paths: all translations are ``other_side``, all paraphrases ``both``.
        Entries without labels count as ``candidates`` says.
        """
        if all(e.translation is None for e in pool):
            return None
        default = self.candidates == "other_side"
        kinds = torch.cat([
            e.translation if e.translation is not None
            else torch.full((len(e),), default, dtype=torch.bool, device=e.hashes[0].device)
            for e in pool
        ])
        if bool(kinds.all()):
            return None if default else kinds  # all translations: the other_side path when that is the rule
        if not bool(kinds.any()):
            return None if not default else kinds
        return kinds

    def get_config_dict(self) -> dict[str, Any]:
        """Hyperparameters for the model card."""
        return {
            "margin": self.margin,
            "megabatch_size": self.megabatch_size,
            "anneal": self.anneal,
            "sampling": self.sampling,
            "candidates": self.candidates,
            "refresh_pool": self.refresh_pool,
            "gather_across_devices": self.gather_across_devices,
        }

    @property
    def citation(self) -> str:
        """BibTeX of the papers that introduced the loss (ParaNMT-50M) and its annealing (PRAS)."""
        return """
@inproceedings{wieting-gimpel-2018-paranmt,
    title = "{P}ara{NMT}-50{M}: Pushing the Limits of Paraphrastic Sentence Embeddings with Millions of Machine
             Translations",
    author = "Wieting, John and Gimpel, Kevin",
    booktitle = "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics
                 (Volume 1: Long Papers)",
    year = "2018",
    address = "Melbourne, Australia",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/P18-1042",
    pages = "451--462",
}
@article{wieting-etal-2021-paraphrastic,
    title = "Paraphrastic Representations at Scale",
    author = "Wieting, John and Gimpel, Kevin and Neubig, Graham and Berg-Kirkpatrick, Taylor",
    journal = "arXiv preprint arXiv:2104.15114",
    year = "2021",
}
"""
