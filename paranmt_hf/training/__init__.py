"""Training: recipes, data, trainer glue."""
