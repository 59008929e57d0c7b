"""Back-translation.

The translation engines (transformers, CTranslate2) and their registry, device placement, the model prepared once
per run, the source side cleaned before decoding, and the ``corpus backtranslate`` stage.
"""
