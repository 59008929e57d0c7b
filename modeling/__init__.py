"""Hub remote-code files of paranmt_hf (installed as ``paranmt_hf.modeling``).

``configuration_paranmt.py``, ``modeling_paranmt.py`` (with ``peephole_lstm.py``, Lasagne's peephole LSTM of the
converted ParaNMT-50M LSTM models), ``tokenization_paranmt.py``, ``token_ids_paranmt.py`` (exact batched token ids),
``featurization_paranmt.py`` (texts -> model inputs) and ``input_module_paranmt.py`` (the sentence-transformers
module) are the one source of the model classes: the library imports them from here, and ``save_pretrained`` copies
those a directory needs next to the weights so that ``AutoModel.from_pretrained(dir, trust_remote_code=True)`` and
``SentenceTransformer(dir, trust_remote_code=True)`` work where paranmt_hf is not installed. They import only torch,
transformers (and its ``tokenizers`` dependency), numpy and each other, with relative imports
(``input_module_paranmt.py`` also derives from sentence-transformers' ``InputModule`` where it is installed).
"""
