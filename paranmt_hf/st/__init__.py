"""sentence-transformers integration: the input module wrapping a ParaNMT model and the saved layouts."""
