"""Hub dataset-card and model-card templates (Jinja, rendered by paranmt_hf.hub and paranmt_hf.corpus)."""
