"""paranmt_hf.utils.lazy: the package names that load on first use (paranmt_hf and paranmt_hf.corpus use it)."""

from __future__ import annotations

import textwrap

import pytest

from paranmt_hf.utils.lazy import lazy_exports


def test_names_load_on_first_use_and_stay() -> None:
    namespace: dict = {"__all__": ["dedent", "missing"]}
    getattr_, dir_ = lazy_exports("pkg", {"dedent": "textwrap"}, namespace)
    value = getattr_("dedent")
    assert value is textwrap.dedent and namespace["dedent"] is value
    assert dir_() == ["dedent", "missing"]
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'nope'"):
        getattr_("nope")


def test_the_packages_export_lazily() -> None:
    import paranmt_hf
    import paranmt_hf.corpus

    assert "ParaNMTEncoder" in dir(paranmt_hf) and "trigram_overlap" in dir(paranmt_hf.corpus)
    from paranmt_hf.corpus import trigram_overlap
    from paranmt_hf.corpus.measures.overlap import trigram_overlap as defined

    assert trigram_overlap is defined and vars(paranmt_hf.corpus)["trigram_overlap"] is defined
    with pytest.raises(AttributeError, match="module 'paranmt_hf' has no attribute 'Encoder'"):
        paranmt_hf.Encoder  # noqa: B018 - the removed alias
