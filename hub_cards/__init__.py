"""Hub cards: ``model_card.md``, ``generator_card.md`` and ``dataset_card.md``, Markdown with Jinja placeholders.

Rendered through huggingface_hub's ``ModelCard.from_template`` / ``DatasetCard.from_template`` by
``paranmt_hf.hub.card`` (model card), ``paranmt_hf.hub.generator_card`` (paraphrase generator card) and
``paranmt_hf.corpus.output.export`` (dataset card).
"""
