"""The library side of the model: everything paranmt_hf does with a ParaNMT model besides training it.

The model itself (config, modules, tokenizer, the sentence-transformers input module) is the Hub remote code in
``modeling/`` (installed as :mod:`paranmt_hf.modeling`), shipped inside every saved directory. This package:

- :mod:`.encoder` (load, encode, save atomically), :mod:`.encode_api` (sentence-transformers' ``encode``
  keywords and ``similarity``), :mod:`.parallel` (multi-process encoding);
- :mod:`.static` and :mod:`.averaging`: averaging models without torch (NumPy + tokenizers);
- :mod:`.build` (a new model from a corpus), :mod:`.tokenization` (tokenizer builders), :mod:`.word_vectors`
  (GloVe), :mod:`.distill` (``subword`` tables distilled from a sentence-transformers teacher);
- :mod:`.st_layout` (sentence-transformers files), :mod:`.registration` (Auto classes, at ``import paranmt_hf``),
  :mod:`.remote_code` (the ``trust_remote_code`` check);
- :mod:`.convert` (the original checkpoints), :mod:`.export`, :mod:`.onnx`, :mod:`.storage` (float16/int8).
"""
