"""Export: ONNX and quantised weights."""
