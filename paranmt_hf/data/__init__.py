"""ParaNMT corpus: streaming datasets builder, filters and loaders."""
