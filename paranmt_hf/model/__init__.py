"""The library side of the model: everything paranmt_hf does with a ParaNMT model besides training it.

The model itself (config, modules, tokenizer, featuriser, the sentence-transformers input module) is the Hub
remote code in ``modeling/`` (installed as :mod:`paranmt_hf.modeling`), shipped inside every saved directory.
This package builds, loads, encodes with, saves, converts and exports such models:

- :mod:`.encoder`: :class:`~paranmt_hf.model.encoder.ParaNMTEncoder`, a model plus its tokenizer: load, encode,
  save (every loader's files, atomically; float16/int8 storage through :mod:`.storage`);
- :mod:`.encode_api`: ``encode``'s keywords and outputs and ``similarity``, as sentence-transformers has them;
- :mod:`.static`: :class:`~paranmt_hf.model.static.StaticEncoder`, averaging models without torch (NumPy +
  tokenizers), on :mod:`.averaging` (NumPy averaging from a per-chunk cache of summed rows);
- :mod:`.build`: a new, untrained model from a corpus (``build_encoder``), and ``combine_encoders``;
- :mod:`.tokenization`: the tokenizer builders (word, trigram, unigram, subword, combined) and their registry;
- :mod:`.word_vectors`: pre-trained word vectors (GloVe) for word embeddings;
- :mod:`.distill`: ``subword`` tables distilled from a sentence-transformers teacher (model2vec);
- :mod:`.st_layout`: the sentence-transformers files of a model directory (``modules.json``, ``static/``);
- :mod:`.parallel`: multi-process encoding;
- :mod:`.registration`: ``model_type="paranmt"`` with the Auto classes, and the input module with
  sentence-transformers, at ``import paranmt_hf``;
- :mod:`.remote_code`: whether loading a directory would run code from it (the ``trust_remote_code`` check);
- :mod:`.convert`: the original checkpoints (PRAS, ParaNMT-50M) converted;
- :mod:`.export` (checked export), :mod:`.onnx` (ONNX graphs and runner), :mod:`.storage` (float16/int8 weights).
"""
