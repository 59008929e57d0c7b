"""Hub model and dataset cards: ``model_card.md`` and ``dataset_card.md``, Markdown with Jinja placeholders.

Rendered through huggingface_hub's ``ModelCard.from_template`` / ``DatasetCard.from_template`` by
``paranmt_hf.hub.card`` (model card) and ``paranmt_hf.corpus.export`` (dataset card).
"""
