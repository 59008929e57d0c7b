r"""Exact unigram segmentation of many words at once, in NumPy: what ``tokenizers``' ``Unigram`` model returns.

``tokenizers`` segments one pre-token at a time, so the first encode of a text with many distinct words spends most
of its time there. :class:`UnigramSegmenter` runs the same best-path search (``Unigram::encode_optimized``) for a
whole list of words together: a trie of the vocabulary by code point is walked from every start position of every
word at once (a direct table for the first steps, an open-addressing hash table of edges after), which yields every
piece starting anywhere; the best path is found in ``encode_optimized``'s visiting order (positions ascending, pieces
from one position by increasing length; a candidate wins only when the node is unreached or its float64 score is
strictly higher, so ties resolve alike), then read back from each word's end.

Only words where the model never inserts its unknown token (every character is itself a piece) of at most
:data:`MAX_CHARS` characters are done here; any other word goes to the ``fallback`` (the model), so the ids are
always the model's (``tests/test_unigram_segmentation.py``). When it pays: ``benchmarks/unigram_search``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

MAX_CHARS = 24
"""Longest word (in characters) segmented here; longer ones go to the fallback (they are rare, and the work arrays
are as wide as the longest word)."""
_CHAR_BITS = 21  # every code point fits in 21 bits: a trie edge is (node << 21) | code point
_DENSE_MAX = 1 << 22  # largest direct table of the walk's second step (depth-1 nodes x one-character pieces)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of key * 2^64 / golden ratio

Segment = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]


def _codes(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of the words back to back (int64) and each word's length in characters."""
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    codes = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    return codes, lengths


def run_places(starts: np.ndarray | int, lengths: np.ndarray) -> np.ndarray:
    """The places of the items of consecutive runs, back to back (int64).

    Run i's ``lengths[i]`` items go to ``starts[i]``, ``starts[i] + 1``, ...; ``starts=0`` gives each item's
    position within its run.
    """
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends) else 0)


class UnigramSegmenter:
    """Batched, exact ``Unigram.tokenize`` ids for the words a unigram vocabulary covers character by character.

    Args:
        vocab: the model's ``(piece, score)`` list (``tokenizer.json``'s ``model.vocab``), in id order.

    A piece listed twice is found under its last id with that id's score, as ``tokenizers`` maps strings to ids.
    """

    def __init__(self, vocab: Sequence[Sequence[Any]]) -> None:
        index: dict[str, int] = {}
        for i, (piece, _) in enumerate(vocab):
            index[piece] = i
        index.pop("", None)  # never found by a trie search from a position
        self.scores = np.asarray([float(score) for _, score in vocab], dtype=np.float64)
        pieces = list(index)
        piece_ids = np.fromiter(index.values(), dtype=np.int64, count=len(index))
        self.single = np.unique(np.fromiter((ord(p) for p in pieces if len(p) == 1), dtype=np.int64))
        codes, lengths = _codes(pieces)
        self.longest = int(lengths.max(initial=0))
        # the trie, level by level: the nodes at depth d are the distinct (parent node, code point) edges of depth d
        starts = np.cumsum(lengths) - lengths
        node = np.zeros(len(pieces), dtype=np.int64)  # each piece's node at the current depth (0: the root)
        edge_keys, edge_children = [], []
        terminal = [np.full(1, -1, dtype=np.int64)]  # node -> piece id (-1: no piece ends there)
        next_node = 1
        for depth in range(1, self.longest + 1):
            rows = np.flatnonzero(lengths >= depth)
            keys = (node[rows] << _CHAR_BITS) | codes[starts[rows] + depth - 1]
            unique, inverse = np.unique(keys, return_inverse=True)
            node[rows] = next_node + inverse.reshape(-1)
            edge_keys.append(unique)
            edge_children.append(np.arange(next_node, next_node + len(unique), dtype=np.int64))
            ends_here = np.full(len(unique), -1, dtype=np.int64)
            done = rows[lengths[rows] == depth]
            ends_here[node[done] - next_node] = piece_ids[done]
            terminal.append(ends_here)
            next_node += len(unique)
        self.terminal = np.concatenate(terminal)
        keys = np.concatenate(edge_keys) if edge_keys else np.zeros(0, dtype=np.int64)
        children = np.concatenate(edge_children) if edge_children else np.zeros(0, dtype=np.int64)
        # the edges in an open-addressing hash table (linear probing, at most half full)
        bits = max(4, int(2 * len(keys)).bit_length())
        self.shift, self.mask = np.uint64(64 - bits), (1 << bits) - 1
        self.table_keys = np.full(1 << bits, -1, dtype=np.int64)
        self.table_children = np.zeros(1 << bits, dtype=np.int64)
        slot = ((keys.astype(np.uint64) * _MIX) >> self.shift).astype(np.int64)
        pending, probes = np.arange(len(keys)), 0
        while len(pending):
            probes += 1
            free = self.table_keys[slot] < 0
            _, first = np.unique(slot[free], return_index=True)  # one key per free slot this round
            placed = np.flatnonzero(free)[first]
            self.table_keys[slot[placed]] = keys[pending[placed]]
            self.table_children[slot[placed]] = children[pending[placed]]
            keep = np.ones(len(pending), dtype=bool)
            keep[placed] = False
            pending, slot = pending[keep], (slot[keep] + 1) & self.mask
        self.probes = probes + 1  # a lookup also reads the empty slot that ends a probe sequence
        # the first two steps of a walk, as direct tables over the alphabet (the one-character pieces): every walk
        # takes the first, and most take the second; the trie numbers its depth-1 nodes 1 .. len(edge_keys[0])
        self.first_node = self._child(self.single)  # (0 << 21) | code: the root's edge
        depth1 = len(edge_keys[0]) if edge_keys else 0
        self.second: np.ndarray | None = None
        if len(edge_keys) > 1 and depth1 * len(self.single) <= _DENSE_MAX:
            parent, code = edge_keys[1] >> _CHAR_BITS, edge_keys[1] & ((1 << _CHAR_BITS) - 1)
            letter, known = self._letters(code)
            self.second = np.full(depth1 * len(self.single), -1, dtype=np.int64)
            self.second[((parent - 1) * len(self.single) + letter)[known]] = edge_children[1][known]

    def _letters(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each code point's index among the one-character pieces, and whether it is one."""
        if not len(self.single):
            return np.zeros(len(codes), dtype=np.int64), np.zeros(len(codes), dtype=bool)
        letter = np.minimum(np.searchsorted(self.single, codes), len(self.single) - 1)
        return letter, self.single[letter] == codes

    def _paths(self, codes: np.ndarray, letters: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Piece ids (back to back) and the number of pieces of each covered word.

        ``codes`` / ``letters``: the words' code points back to back, and their indices among the one-character
        pieces.
        """
        count = len(lengths)
        owner = np.repeat(np.arange(count), lengths)  # word of each character
        within = run_places(0, lengths)  # each character's place in its word
        room = lengths[owner] - within  # characters from each position to its word's end
        # every piece starting at every position: walk the trie from all positions at once
        found_at, found_size, found_id = [], [], []
        at = np.arange(len(codes))
        state = self.first_node[letters]  # every character is a piece: the first step always succeeds
        for size in range(1, self.longest + 1):
            if size > 1:
                alive = room[at] >= size
                at, state = at[alive], state[alive]
                if size == 2 and self.second is not None:
                    state = self.second[(state - 1) * len(self.single) + letters[at + 1]]
                else:
                    state = self._child((state << _CHAR_BITS) | codes[at + size - 1])
                hit = state >= 0
                at, state = at[hit], state[hit]
                if not len(at):
                    break
            ids = self.terminal[state]
            piece = ids >= 0
            found_at.append(at[piece])
            found_size.append(np.full(int(piece.sum()), size, dtype=np.int64))
            found_id.append(ids[piece])
        begins, sizes, pids = np.concatenate(found_at), np.concatenate(found_size), np.concatenate(found_id)
        # word w's positions are nodes first[w] .. first[w] + lengths[w] (first[w]: its first character's index + w)
        order = np.argsort(within[begins].astype(np.uint8), kind="stable")  # by position in the word
        step = within[begins][order]
        source = (begins + owner[begins])[order]
        target, pids = source + sizes[order], pids[order]
        gain = self.scores[pids]
        bounds = np.searchsorted(step, np.arange(MAX_CHARS + 2))
        nodes = len(codes) + count
        best = np.zeros(nodes, dtype=np.float64)  # best path score ending at each node (Unigram::encode_optimized)
        back = np.full(nodes, -1, dtype=np.int64)  # where the best piece ending at the node starts
        last = np.zeros(nodes, dtype=np.int64)  # ... and its id
        for s in range(MAX_CHARS + 1):
            lo, hi = bounds[s], bounds[s + 1]
            if lo == hi:
                continue
            to = target[lo:hi]
            score = gain[lo:hi] + best[source[lo:hi]]
            better = (back[to] < 0) | (score > best[to])
            to = to[better]
            best[to] = score[better]
            back[to] = source[lo:hi][better]
            last[to] = pids[lo:hi][better]
        # read each path back from its word's end; the nodes on the paths, in order, are the pieces in text order
        first = np.cumsum(lengths) - lengths + np.arange(count)  # each word's position-0 node
        on_path = np.zeros(nodes, dtype=bool)
        word, node = np.arange(count), first + lengths
        while len(node):
            on_path[node] = True
            node = back[node]
            more = node > first[word]
            word, node = word[more], node[more]
        ends = np.flatnonzero(on_path)
        return last[ends], np.bincount(np.searchsorted(first, ends, side="right") - 1, minlength=count)

    def _child(self, keys: np.ndarray) -> np.ndarray:
        """The trie node each edge key leads to (-1: no such edge): an open-addressing hash table, probed at once."""
        slot = ((keys.astype(np.uint64) * _MIX) >> self.shift).astype(np.int64)
        child = np.full(len(keys), -1, dtype=np.int64)
        pending = np.arange(len(keys))
        for _ in range(self.probes):
            found = self.table_keys[slot]
            match = found == keys[pending]
            child[pending[match]] = self.table_children[slot[match]]
            go_on = ~match & (found >= 0)
            pending, slot = pending[go_on], (slot[go_on] + 1) & self.mask
            if not len(pending):
                break
        return child

    def segment(self, words: list[str], fallback: Segment) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every word's pieces back to back (int64) and the number of pieces of each word.

        ``fallback`` gives (ids back to back, counts) of the words this does not cover (the model, word by word).
        """
        codes, lengths = _codes(words)
        letters, known = self._letters(codes)
        # covered: non-empty, at most MAX_CHARS characters, each character a piece of its own
        unknown = np.bincount(np.repeat(np.arange(len(words)), lengths)[~known], minlength=len(words))
        covered = (unknown == 0) & (lengths > 0) & (lengths <= MAX_CHARS)
        inside = np.repeat(covered, lengths)
        mine = np.flatnonzero(covered)
        other = np.flatnonzero(~covered)
        counts = np.zeros(len(words), dtype=np.int64)
        parts = []
        if len(mine):
            ids, counts[mine] = self._paths(codes[inside], letters[inside], lengths[mine])
            parts.append((mine, ids))
        if len(other):
            ids, counts[other] = fallback([words[i] for i in other.tolist()])
            parts.append((other, ids))
        ends = np.cumsum(counts)
        starts = ends - counts
        flat = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        for rows, ids in parts:
            flat[run_places(starts[rows], counts[rows])] = ids
        return flat, counts


__all__ = ["UnigramSegmenter", "MAX_CHARS", "Segment", "run_places"]
