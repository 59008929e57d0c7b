"""ONNX export of single averaging encoders (word / trigram / sp): flat ``input_ids`` + ``offsets`` -> embeddings.

The graph is written with ``onnx.helper`` rather than traced: ``torch.onnx`` turns ``embedding_bag`` into a loop
over bags and trips over ``padding_idx`` (pytorch #128930/#58567). It is the model's ``forward_flat`` op for op:

    rows  = Gather(weight, input_ids) * keep[input_ids]        # [N, D]; keep = 0 for dropped unknown tokens
    C     = [0; CumSum(float64(rows))]                          # prefix sums, [N+1, D]
    sums  = C[ends] - C[offsets]                                # ends = offsets[1:] + [N]; same for the counts
    out   = Where(count == 0, weight[unk], float32(sums / max(count, 1)))   # empty sentence -> [UNK] row

(max pooling: ScatterND with reduction="max" over each token's sentence index.) Float64 prefix sums keep the result
within float32 rounding of PyTorch's; a scatter-add would be exact too but runs element by element in onnxruntime.

Inputs: ``input_ids`` int64 [N] (all token ids of the batch back to back) and ``offsets`` int64 [B] (start of each
sentence), exactly what ``ParaNMTEncoder.features`` / sentence-transformers' ``StaticEmbedding`` produce. Output:
``embeddings`` float32 [B, D]. :func:`quantize_onnx` makes the int8 version (onnxruntime dynamic quantisation of the
embedding ``Gather``), and :class:`OnnxEncoder` runs either with onnxruntime and the model's own tokenizer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..utils.imports import require

if TYPE_CHECKING:
    from ..encoder import ParaNMTEncoder

OPSET = 18
ONNX_FILE = "model.onnx"
ONNX_INT8_FILE = "model_int8.onnx"


def _encoder(model: ParaNMTEncoder | str | os.PathLike[str]) -> ParaNMTEncoder:
    from ..encoder import ParaNMTEncoder

    return model if isinstance(model, ParaNMTEncoder) else ParaNMTEncoder.from_pretrained(model)


def build_graph(encoder: ParaNMTEncoder) -> Any:
    """The ONNX ``ModelProto`` of a single averaging encoder (raises ``ValueError`` for other models)."""
    onnx = require("onnx", "onnx")
    from onnx import TensorProto, helper, numpy_helper

    model = encoder.model
    if len(model.encoders) != 1 or not model.accepts_flat_input:
        raise ValueError("ONNX export supports single averaging encoders (word, trigram, sp) only")
    comp = model.encoders[0]
    weight = comp.embedding.weight.detach().float().cpu().numpy()
    dim, mode = weight.shape[1], comp.pooling
    inits = [
        numpy_helper.from_array(weight, "weight"),
        numpy_helper.from_array(np.array([comp.unk_token_id], dtype=np.int64), "unk_id"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_1d"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "axis0_scalar"),
    ]
    n = helper.make_node
    nodes = [
        n("Shape", ["input_ids"], ["n"]),
        n("Shape", ["offsets"], ["b"]),
        n("Gather", ["weight", "input_ids"], ["rows_all"], axis=0),
        n("Gather", ["weight", "unk_id"], ["unk_row"], axis=0),
    ]
    keep = None
    if comp.drop_unknown:
        keep = np.ones(comp.vocab_size, dtype=bool)
        keep[comp.unknown_ids] = False
    if mode == "mean":
        nodes += _mean_nodes(helper, inits, numpy_helper, dim, keep)
    else:
        nodes += _max_nodes(helper, inits, numpy_helper, dim, keep)
    graph = helper.make_graph(
        nodes,
        "paranmt_averaging",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["num_tokens"]),
            helper.make_tensor_value_info("offsets", TensorProto.INT64, ["batch"]),
        ],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", dim])],
        inits,
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="paranmt_hf")
    proto.ir_version = min(proto.ir_version, 9)
    onnx.checker.check_model(proto)
    return proto


def _mean_nodes(helper: Any, inits: list, numpy_helper: Any, dim: int, keep: np.ndarray | None) -> list:
    """Mean per sentence from float64 prefix sums: sum = C[end] - C[start] (no scatter: fast in onnxruntime)."""
    from onnx import TensorProto

    n = helper.make_node
    d = TensorProto.DOUBLE
    inits += [
        numpy_helper.from_array(np.zeros((1, dim)), "zero_row"),
        numpy_helper.from_array(np.zeros(1), "zero_1d_f64"),
        numpy_helper.from_array(np.array(1.0), "one_f64"),
        numpy_helper.from_array(np.array(0.0), "zero_f64"),
    ]
    nodes = [
        n("Slice", ["offsets", "one_1d", "b"], ["starts_after_first"]),
        n("Concat", ["starts_after_first", "n"], ["ends"], axis=0),
    ]
    if keep is not None:
        inits.append(numpy_helper.from_array(keep.astype(np.float64), "keep_table"))
        nodes += [
            n("Gather", ["keep_table", "input_ids"], ["weights_f64"], axis=0),
            n("Cast", ["rows_all"], ["rows_all_f64"], to=d),
            n("Unsqueeze", ["weights_f64", "axis1"], ["weights_col"]),
            n("Mul", ["rows_all_f64", "weights_col"], ["rows_f64"]),
        ]
    else:
        nodes += [
            n("ConstantOfShape", ["n"], ["weights_f64"], value=helper.make_tensor("v", d, [1], [1.0])),
            n("Cast", ["rows_all"], ["rows_f64"], to=d),
        ]
    nodes += [
        n("CumSum", ["rows_f64", "axis0_scalar"], ["cum_rows"]),
        n("Concat", ["zero_row", "cum_rows"], ["prefix_rows"], axis=0),
        n("CumSum", ["weights_f64", "axis0_scalar"], ["cum_weights"]),
        n("Concat", ["zero_1d_f64", "cum_weights"], ["prefix_weights"], axis=0),
        n("Gather", ["prefix_rows", "ends"], ["rows_at_end"], axis=0),
        n("Gather", ["prefix_rows", "offsets"], ["rows_at_start"], axis=0),
        n("Sub", ["rows_at_end", "rows_at_start"], ["sums"]),
        n("Gather", ["prefix_weights", "ends"], ["w_at_end"], axis=0),
        n("Gather", ["prefix_weights", "offsets"], ["w_at_start"], axis=0),
        n("Sub", ["w_at_end", "w_at_start"], ["count"]),
        n("Unsqueeze", ["count", "axis1"], ["count2"]),
        n("Max", ["count2", "one_f64"], ["denom"]),
        n("Div", ["sums", "denom"], ["mean_f64"]),
        n("Cast", ["mean_f64"], ["value"], to=TensorProto.FLOAT),
        n("Equal", ["count2", "zero_f64"], ["empty"]),
        n("Where", ["empty", "unk_row", "value"], ["embeddings"]),
    ]
    return nodes


def _max_nodes(helper: Any, inits: list, numpy_helper: Any, dim: int, keep: np.ndarray | None) -> list:
    """Max per sentence with ScatterND(reduction="max") over each token's sentence index."""
    from onnx import TensorProto

    n = helper.make_node
    inits.append(numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero_f"))
    inits.append(numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_1d"))
    inits.append(numpy_helper.from_array(np.array([dim], dtype=np.int64), "dim_1d"))
    nodes = [
        n("Add", ["n", "one_1d"], ["n1"]),
        n("ConstantOfShape", ["n1"], ["marks0"], value=helper.make_tensor("v", TensorProto.INT64, [1], [0])),
        n("ConstantOfShape", ["b"], ["ones_b"], value=helper.make_tensor("v", TensorProto.INT64, [1], [1])),
        n("ScatterElements", ["marks0", "offsets", "ones_b"], ["marks"], axis=0, reduction="add"),
        n("CumSum", ["marks", "axis0_scalar"], ["cum"]),
        n("Slice", ["cum", "zero_1d", "n"], ["cum_n"]),
        n("Sub", ["cum_n", "one_1d"], ["bag_all"]),
    ]
    rows, bag = "rows_all", "bag_all"
    if keep is not None:
        inits.append(numpy_helper.from_array(keep, "keep_table"))
        nodes += [
            n("Gather", ["keep_table", "input_ids"], ["keep"], axis=0),
            n("Compress", ["rows_all", "keep"], ["rows"], axis=0),
            n("Compress", ["bag_all", "keep"], ["bag"], axis=0),
        ]
        rows, bag = "rows", "bag"
    nodes += [
        n("Concat", ["b", "dim_1d"], ["bd"], axis=0),
        n("ConstantOfShape", ["bd"], ["init"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [-np.inf])),
        n("Unsqueeze", [bag, "axis1"], ["bag_idx"]),
        n("ScatterND", ["init", "bag_idx", rows], ["value"], reduction="max"),
        n("Shape", [bag], ["nk"]),
        n("ConstantOfShape", ["nk"], ["ones_k"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
        n("ConstantOfShape", ["b"], ["zeros_b"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0])),
        n("ScatterElements", ["zeros_b", bag, "ones_k"], ["count"], axis=0, reduction="add"),
        n("Unsqueeze", ["count", "axis1"], ["count2"]),
        n("Equal", ["count2", "zero_f"], ["empty"]),
        n("Where", ["empty", "unk_row", "value"], ["embeddings"]),
    ]
    return nodes


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
    if not int8:
        return fp32
    int8_path = quantize_onnx(fp32, out / ONNX_INT8_FILE)
    fp32.unlink()
    return int8_path


def quantize_onnx(fp32_path: str | os.PathLike[str], int8_path: str | os.PathLike[str]) -> Path:
    """Dynamic int8 quantisation (onnxruntime) of the embedding table: uint8 rows + scale, dequantised on gather."""
    quant = require("onnxruntime.quantization", "onnx")
    quant.quantize_dynamic(
        str(fp32_path), str(int8_path), op_types_to_quantize=["Gather"], weight_type=quant.QuantType.QUInt8
    )
    return Path(int8_path)


class OnnxEncoder:
    """Run an exported encoder with onnxruntime: the tokenizer's ids (paranmt_hf fast path) -> ONNX graph.

    Args:
        path: the ``.onnx`` file, or a directory from :func:`export_onnx` (``model.onnx``, else ``model_int8.onnx``).
        threads: onnxruntime intra-op threads (``None``: its default).
    """

    def __init__(self, path: str | os.PathLike[str], threads: int | None = None) -> None:
        from ..modeling.featurization_paranmt import ParaNMTFeaturizer
        from ..modeling.input_module_paranmt import load_tokenizer

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
        from ..modeling.token_ids_paranmt import lengths_to_offsets

        parts = []
        for start in range(0, len(sentences), batch_size):
            flat, lengths = self.featurizer.token_ids(list(sentences[start : start + batch_size]))
            feeds = {"input_ids": flat, "offsets": lengths_to_offsets(lengths)}
            parts.append(self.session.run(["embeddings"], feeds)[0])
        out = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        if normalize:
            out = out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out
