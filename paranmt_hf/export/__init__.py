"""Export: ONNX (fp32 / int8) of averaging encoders, and float16 / int8 weight storage.

```python
from paranmt_hf.export import OnnxEncoder, export_onnx, save_quantized

export_onnx("my-model", "my-model-onnx", int8=True)        # model_int8.onnx + tokenizer files
OnnxEncoder("my-model-onnx").encode(["A man plays the guitar."])
save_quantized(encoder, "my-model-fp16", "float16")         # loads everywhere, computes in float32
```

Command line: ``paranmt-hf export MODEL_DIR --format onnx|onnx-int8|fp16|int8 --output OUT``.
"""

from __future__ import annotations

from .onnx import OnnxEncoder, build_graph, export_onnx, quantize_onnx
from .quantize import load_int8_model, save_quantized

__all__ = ["OnnxEncoder", "build_graph", "export_onnx", "load_int8_model", "quantize_onnx", "save_quantized"]
