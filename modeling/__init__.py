"""Hub remote-code files of paranmt_hf (installed as ``paranmt_hf.modeling``): the model itself.

- ``kinds_paranmt.py``: the encoder kinds, one spec each (``EncoderKind``);
- ``configuration_paranmt.py``: ``ParaNMTConfig``;
- ``modeling_paranmt.py``: ``ParaNMTModel`` (with ``peephole_lstm.py``, Lasagne's peephole LSTM of the converted
  ParaNMT-50M LSTM models);
- ``segmentation_paranmt.py``: how raw text is read (word split, lookup rules, the segmenters);
- ``tokenization_paranmt.py``: ``ParaNMTTokenizer`` (trigram and combined tokenizers);
- ``featurization_paranmt.py``: texts -> model inputs (with paranmt_hf's batched ids where it is installed);
- ``input_module_paranmt.py``: the sentence-transformers module.

The one source of the model classes: the library imports them, and ``save_pretrained`` copies them next to the
weights for ``AutoModel`` / ``SentenceTransformer(dir, trust_remote_code=True)``. They import only torch, transformers,
tokenizers, numpy, the standard library and each other (and, guarded, sentence-transformers' ``InputModule`` and
paranmt_hf's batched ids where those are installed).
"""
