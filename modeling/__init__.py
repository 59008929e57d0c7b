"""Hub remote-code files of paranmt_hf (installed as ``paranmt_hf.modeling``).

``configuration_paranmt.py``, ``modeling_paranmt.py`` (with ``peephole_lstm.py``, Lasagne's peephole LSTM of the
converted ParaNMT-50M LSTM models) and ``tokenization_paranmt.py`` are the one source of the model classes: the
library imports them from here, and ``save_pretrained`` copies them next to the weights so that
``AutoModel.from_pretrained(dir, trust_remote_code=True)`` works where paranmt_hf is not installed. They import only
torch, transformers (and its ``tokenizers`` dependency) and each other, with relative imports.
"""
