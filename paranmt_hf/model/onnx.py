"""ONNX export of averaging encoders and their combinations: flat ``input_ids`` + ``offsets`` -> embeddings.

The graph is written with ``onnx.helper`` rather than traced (``torch.onnx`` turns ``embedding_bag`` into a loop
and trips over ``padding_idx``). It is the model's ``forward_flat``: gathered rows (unknown tokens dropped where the
model drops them), float64 prefix sums differenced at the sentence offsets (within float32 rounding of PyTorch),
divided by the counts, the ``[UNK]`` row for an empty sentence; max pooling uses ScatterND. A combination does
that per component and concatenates (or adds) the results.

Inputs: ``input_ids`` int64 [N] and ``offsets`` int64 [B], as ``ParaNMTEncoder.features`` and
``StaticEmbedding`` produce them; output: ``embeddings`` float32 [B, D]. :func:`quantize_onnx` makes the int8
version, and :class:`OnnxEncoder` runs either with onnxruntime and the model's own tokenizer.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..utils.imports import require

if TYPE_CHECKING:
    from .encoder import ParaNMTEncoder

OPSET = 18
ONNX_FILE = "model.onnx"
ONNX_INT8_FILE = "model_int8.onnx"


def _encoder(model: ParaNMTEncoder | str | os.PathLike[str]) -> ParaNMTEncoder:
    from .encoder import ParaNMTEncoder

    return model if isinstance(model, ParaNMTEncoder) else ParaNMTEncoder.from_pretrained(model)


class _Graph:
    """Nodes and initialisers of the graph under construction, names prefixed per component."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(self.numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        self.nodes.append(self.helper.make_node(op, inputs, [output], **attrs))
        return output

    def fill(self, shape: str, output: str, dtype: int, value: float) -> str:
        return self.node("ConstantOfShape", [shape], output, value=self.helper.make_tensor("v", dtype, [1], [value]))


def build_graph(encoder: ParaNMTEncoder) -> Any:
    """The ONNX ``ModelProto`` of an averaging encoder or combination (raises ``ValueError`` for recurrent models).

    Each component reads the ids of its own range (``[offset, offset + vocab_size)``) with weight 1 and every other
    id with weight 0, so a combination is its components' graphs side by side, concatenated (or added) at the end.
    """
    onnx = require("onnx", "onnx")
    from onnx import TensorProto

    model = encoder.model
    if not model.accepts_flat_input:
        raise ValueError("ONNX export supports averaging encoders (word, trigram, sp, subword) and their "
                         "combinations only")
    g = _Graph()
    g.const("one_1d", np.array([1], dtype=np.int64))
    g.const("axis1", np.array([1], dtype=np.int64))
    g.const("axis0_scalar", np.array(0, dtype=np.int64))
    g.node("Shape", ["input_ids"], "n")
    g.node("Shape", ["offsets"], "b")
    components = list(zip(model.components, model.config.component_offsets(), strict=True))
    outputs = []
    for k, (comp, offset) in enumerate(components):
        prefix = "" if len(components) == 1 else f"c{k}_"
        outputs.append(_component(g, comp, offset, prefix, single=len(components) == 1))
    if len(outputs) > 1:
        if model.config.combination == "add":
            g.node("Sum", outputs, "embeddings")
        else:
            g.node("Concat", outputs, "embeddings", axis=1)
    dim = int(model.config.hidden_size)
    graph = g.helper.make_graph(
        g.nodes,
        "paranmt_averaging",
        [
            g.helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["num_tokens"]),
            g.helper.make_tensor_value_info("offsets", TensorProto.INT64, ["batch"]),
        ],
        [g.helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", dim])],
        g.inits,
    )
    proto = g.helper.make_model(graph, opset_imports=[g.helper.make_opsetid("", OPSET)], producer_name="paranmt_hf")
    proto.ir_version = min(proto.ir_version, 9)
    onnx.checker.check_model(proto)
    return proto


def _component(g: _Graph, comp: Any, offset: int, p: str, single: bool) -> str:
    """Nodes of one averaging component: its embedding of every sentence (output name returned)."""
    weight = comp.embedding.weight.detach().float().cpu().numpy()
    g.const(f"{p}weight", weight)
    g.const(f"{p}unk_id", np.array([comp.unk_token_id], dtype=np.int64))
    g.node("Gather", [f"{p}weight", f"{p}unk_id"], f"{p}unk_row", axis=0)
    keep = np.ones(comp.vocab_size, dtype=bool)
    if comp.drop_unknown:
        keep[comp.unknown_ids] = False
    if single:  # every id is this component's: no range test
        local = "input_ids"
        member = g.node("Gather", [g.const(f"{p}keep_table", keep), "input_ids"], f"{p}member", axis=0)
    else:
        g.const(f"{p}low", np.array(offset, dtype=np.int64))
        g.const(f"{p}high", np.array(offset + comp.vocab_size - 1, dtype=np.int64))
        shifted = g.node("Sub", ["input_ids", f"{p}low"], f"{p}shifted")
        local = g.node("Clip", [shifted, g.const(f"{p}zero_i", np.array(0, dtype=np.int64)),
                                g.const(f"{p}last_i", np.array(comp.vocab_size - 1, dtype=np.int64))], f"{p}local")
        g.node("GreaterOrEqual", ["input_ids", f"{p}low"], f"{p}ge")
        g.node("LessOrEqual", ["input_ids", f"{p}high"], f"{p}le")
        g.node("And", [f"{p}ge", f"{p}le"], f"{p}in_range")
        kept = g.node("Gather", [g.const(f"{p}keep_table", keep), local], f"{p}kept", axis=0)
        member = g.node("And", [f"{p}in_range", kept], f"{p}member")
    g.node("Gather", [f"{p}weight", local], f"{p}rows_all", axis=0)
    if comp.pooling == "mean":
        return _mean(g, p, member, weight.shape[1])
    return _max(g, p, member, weight.shape[1])


def _mean(g: _Graph, p: str, member: str, dim: int) -> str:
    """Mean per sentence from float64 prefix sums: sum = C[end] - C[start] (no scatter: fast in onnxruntime)."""
    from onnx import TensorProto

    d = TensorProto.DOUBLE
    g.node("Slice", ["offsets", "one_1d", "b"], f"{p}starts_after_first")
    g.node("Concat", [f"{p}starts_after_first", "n"], f"{p}ends", axis=0)
    weights = g.node("Cast", [member], f"{p}weights_f64", to=d)
    g.node("Cast", [f"{p}rows_all"], f"{p}rows_all_f64", to=d)
    g.node("Unsqueeze", [weights, "axis1"], f"{p}weights_col")
    g.node("Mul", [f"{p}rows_all_f64", f"{p}weights_col"], f"{p}rows_f64")
    g.node("CumSum", [f"{p}rows_f64", "axis0_scalar"], f"{p}cum_rows")
    g.node("Concat", [g.const(f"{p}zero_row", np.zeros((1, dim))), f"{p}cum_rows"], f"{p}prefix_rows", axis=0)
    g.node("CumSum", [weights, "axis0_scalar"], f"{p}cum_weights")
    g.node("Concat", [g.const(f"{p}zero_1d_f64", np.zeros(1)), f"{p}cum_weights"], f"{p}prefix_weights", axis=0)
    g.node("Gather", [f"{p}prefix_rows", f"{p}ends"], f"{p}rows_at_end", axis=0)
    g.node("Gather", [f"{p}prefix_rows", "offsets"], f"{p}rows_at_start", axis=0)
    g.node("Sub", [f"{p}rows_at_end", f"{p}rows_at_start"], f"{p}sums")
    g.node("Gather", [f"{p}prefix_weights", f"{p}ends"], f"{p}w_at_end", axis=0)
    g.node("Gather", [f"{p}prefix_weights", "offsets"], f"{p}w_at_start", axis=0)
    g.node("Sub", [f"{p}w_at_end", f"{p}w_at_start"], f"{p}count")
    g.node("Unsqueeze", [f"{p}count", "axis1"], f"{p}count2")
    g.node("Max", [f"{p}count2", g.const(f"{p}one_f64", np.array(1.0))], f"{p}denom")
    g.node("Div", [f"{p}sums", f"{p}denom"], f"{p}mean_f64")
    g.node("Cast", [f"{p}mean_f64"], f"{p}value", to=TensorProto.FLOAT)
    g.node("Equal", [f"{p}count2", g.const(f"{p}zero_f64", np.array(0.0))], f"{p}empty")
    return g.node("Where", [f"{p}empty", f"{p}unk_row", f"{p}value"], f"{p}embeddings")


def _max(g: _Graph, p: str, member: str, dim: int) -> str:
    """Max per sentence with ScatterND(reduction="max") over each kept token's sentence index."""
    from onnx import TensorProto

    f, i = TensorProto.FLOAT, TensorProto.INT64
    g.node("Add", ["n", "one_1d"], f"{p}n1")
    g.fill(f"{p}n1", f"{p}marks0", i, 0)
    g.fill("b", f"{p}ones_b", i, 1)
    g.node("ScatterElements", [f"{p}marks0", "offsets", f"{p}ones_b"], f"{p}marks", axis=0, reduction="add")
    g.node("CumSum", [f"{p}marks", "axis0_scalar"], f"{p}cum")
    g.node("Slice", [f"{p}cum", g.const(f"{p}zero_1d", np.array([0], dtype=np.int64)), "n"], f"{p}cum_n")
    g.node("Sub", [f"{p}cum_n", "one_1d"], f"{p}bag_all")
    rows = g.node("Compress", [f"{p}rows_all", member], f"{p}rows", axis=0)
    bag = g.node("Compress", [f"{p}bag_all", member], f"{p}bag", axis=0)
    g.node("Concat", ["b", g.const(f"{p}dim_1d", np.array([dim], dtype=np.int64))], f"{p}bd", axis=0)
    g.fill(f"{p}bd", f"{p}init", f, -np.inf)
    g.node("Unsqueeze", [bag, "axis1"], f"{p}bag_idx")
    g.node("ScatterND", [f"{p}init", f"{p}bag_idx", rows], f"{p}value", reduction="max")
    g.node("Shape", [bag], f"{p}nk")
    g.fill(f"{p}nk", f"{p}ones_k", f, 1.0)
    g.fill("b", f"{p}zeros_b", f, 0.0)
    g.node("ScatterElements", [f"{p}zeros_b", bag, f"{p}ones_k"], f"{p}count", axis=0, reduction="add")
    g.node("Unsqueeze", [f"{p}count", "axis1"], f"{p}count2")
    g.node("Equal", [f"{p}count2", g.const(f"{p}zero_f", np.array(0.0, dtype=np.float32))], f"{p}empty")
    return g.node("Where", [f"{p}empty", f"{p}unk_row", f"{p}value"], f"{p}embeddings")


def export_onnx(
    model: ParaNMTEncoder | str | os.PathLike[str], output_dir: str | os.PathLike[str], int8: bool = False
) -> Path:
    """Write ``model.onnx`` (or ``model_int8.onnx`` when ``int8``) and the tokenizer files into ``output_dir``.

    Returns the path of the ONNX file. Load it with :class:`OnnxEncoder`.
    """
    onnx = require("onnx", "onnx")
    encoder = _encoder(model)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    fp32 = out / ONNX_FILE
    onnx.save(build_graph(encoder), str(fp32))
    encoder.tokenizer.save_pretrained(str(out))
    path = fp32
    if int8:
        path = quantize_onnx(fp32, out / ONNX_INT8_FILE)
        fp32.unlink()
    (out / "README.md").write_text(onnx_readme(out, path.name, encoder), encoding="utf-8")
    return path


ONNX_README_SENTENCES = ["A man plays the guitar.", "Someone is playing a guitar.", "The stock market fell."]
"""The sentences the ONNX folder's README snippet embeds."""

_README = """---
library_name: onnx
pipeline_tag: sentence-similarity
tags:
- onnx
- sentence-embeddings
- static-embeddings
- paranmt
---

# {name} (ONNX)

`{onnx_file}`: {dim}-d sentence embeddings of the {description}, exported by paranmt_hf
(`paranmt-hf export --format {fmt}`). It runs with onnxruntime, `tokenizers` and NumPy alone: no torch, no
transformers, no paranmt_hf (`pip install onnxruntime tokenizers numpy`). Run this in this folder:

```python
{snippet}
```

Inputs: `input_ids` int64 `[num_tokens]` (the token ids of every sentence of the batch, back to back) and `offsets`
int64 `[batch]` (where each sentence starts). Output: `embeddings` float32 `[batch, {dim}]`: the mean (or max) of
each sentence's token vectors, as the PyTorch model gives them (checked on export: `paranmt-hf export` compares
both). A sentence without known tokens gets the unknown-token vector. Compare sentences by cosine similarity.
{tokenizer_note}"""

_SNIPPET_TOKENIZERS = ("""import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer
""", """tokenizer = Tokenizer.from_file("tokenizer.json")
tokenizer.no_padding()
tokenizer.no_truncation()


def token_ids(sentence: str) -> list[int]:
    return tokenizer.encode(sentence, add_special_tokens=False).ids""")

_SNIPPET_SEGMENTERS = ("""import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, ".")  # segmentation_paranmt.py, shipped in this folder, needs only `tokenizers`
from segmentation_paranmt import Segmenters
""", """token_ids = Segmenters.from_file("paranmt_tokenizer.json").encode_ids  # every component's ids, shifted""")

_SNIPPET_RUN = """{imports}
session = ort.InferenceSession("{onnx_file}", providers=["CPUExecutionProvider"])
{tokenize}


def encode(sentences: list[str]) -> np.ndarray:
    ids = [token_ids(s) for s in sentences]
    lengths = np.array([len(row) for row in ids], dtype=np.int64)
    feeds = {{"input_ids": np.array([i for row in ids for i in row], dtype=np.int64),
             "offsets": np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)}}
    return session.run(["embeddings"], feeds)[0]


embeddings = encode({sentences!r})
unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
print(unit @ unit.T)"""


def onnx_readme(folder: str | os.PathLike[str], onnx_file: str, encoder: ParaNMTEncoder) -> str:
    """The README of an ONNX export folder: what it holds and a snippet that runs it without torch.

    The snippet reads ``tokenizer.json`` with ``tokenizers`` (word, sp, subword models), or ``paranmt_tokenizer.json``
    with the shipped ``segmentation_paranmt.py`` (trigram models and combinations).
    """
    plain = (Path(folder) / "tokenizer.json").is_file() and not (Path(folder) / "paranmt_tokenizer.json").is_file()
    imports, tokenize = _SNIPPET_TOKENIZERS if plain else _SNIPPET_SEGMENTERS
    snippet = _SNIPPET_RUN.format(imports=imports, onnx_file=onnx_file, tokenize=tokenize,
                                  sentences=ONNX_README_SENTENCES)
    config = encoder.model.config
    note = ("" if plain else "\nThe tokenizer files (`paranmt_tokenizer.json` and the `.py` files) also load with "
            "`transformers.AutoTokenizer.from_pretrained(folder, trust_remote_code=True)`.\n")
    kinds = [c["kind"] for c in config.resolved_components()]
    description = f"`{kinds[0]}` averaging encoder" if len(kinds) == 1 else (
        f"`{'+'.join(kinds)}` combination of averaging encoders ({config.combination})")
    return _README.format(name="ParaNMT model", onnx_file=onnx_file, description=description,
                          fmt="onnx-int8" if onnx_file == ONNX_INT8_FILE else "onnx", dim=int(config.hidden_size),
                          snippet=snippet, tokenizer_note=note)


_PREPROCESSING_HINT = "Please consider to run pre-processing before quantization"


class _DropPreprocessingHint(logging.Filter):
    """onnxruntime's advice to pre-process (shape inference for convolution graphs): nothing to do for a Gather."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_PREPROCESSING_HINT)


def quantize_onnx(fp32_path: str | os.PathLike[str], int8_path: str | os.PathLike[str]) -> Path:
    """Dynamic int8 quantisation (onnxruntime) of the embedding table: uint8 rows + scale, dequantised on gather."""
    quant = require("onnxruntime.quantization", "onnx")
    root, hint = logging.getLogger(), _DropPreprocessingHint()
    root.addFilter(hint)  # onnxruntime logs it with logging.warning (the root logger)
    try:
        quant.quantize_dynamic(
            str(fp32_path), str(int8_path), op_types_to_quantize=["Gather"], weight_type=quant.QuantType.QUInt8
        )
    finally:
        root.removeFilter(hint)
    return Path(int8_path)


class OnnxEncoder:
    """Run an exported encoder with onnxruntime: the tokenizer's ids (paranmt_hf fast path) -> ONNX graph.

    Args:
        path: the ``.onnx`` file, or a directory from :func:`export_onnx` (``model.onnx``, else ``model_int8.onnx``).
        threads: onnxruntime intra-op threads (``None``: its default).
    """

    def __init__(self, path: str | os.PathLike[str], threads: int | None = None) -> None:
        from ..modeling.featurization_paranmt import ParaNMTFeaturizer
        from ..modeling.tokenization_paranmt import load_tokenizer

        ort = require("onnxruntime", "onnx")
        path = Path(path)
        if path.is_dir():
            path = path / ONNX_FILE if (path / ONNX_FILE).is_file() else path / ONNX_INT8_FILE
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = load_tokenizer(path.parent)
        self.featurizer = ParaNMTFeaturizer(self.tokenizer, flat=True)

    def encode(self, sentences: list[str], batch_size: int = 512, normalize: bool = False) -> np.ndarray:
        """Embeddings ``[len(sentences), dim]`` float32."""
        from ..modeling.featurization_paranmt import lengths_to_offsets

        parts = []
        for start in range(0, len(sentences), batch_size):
            flat, lengths = self.featurizer.token_ids(list(sentences[start : start + batch_size]))
            feeds = {"input_ids": flat, "offsets": lengths_to_offsets(lengths)}
            parts.append(self.session.run(["embeddings"], feeds)[0])
        out = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        if normalize:
            out = out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out
