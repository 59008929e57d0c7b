"""The ParaNMT ``datasets.GeneratorBasedBuilder`` (installed as ``paranmt_hf.dataset_scripts``)."""
