"""Loading checkpoints never runs pickled code: malicious pickles and .pt files are refused, with no side effect."""

from __future__ import annotations

import argparse
import os
import pickle

import numpy as np
import pytest
import torch

from paranmt_hf.model.convert.paranmt50m import convert_paranmt50m
from paranmt_hf.model.convert.pras import convert_pras, load_pras_checkpoint
from paranmt_hf.utils.safe_pickle import (
    RestrictedUnpickler,
    UnsafePickleError,
    load_legacy_pickle,
    load_torch_checkpoint,
)


class Evil:
    """Unpickling calls os.system(command): it would create `target`."""

    def __init__(self, target) -> None:
        self.command = f"echo pwned > {target}"

    def __reduce__(self):
        return (os.system, (self.command,))


class EvalEvil:
    def __reduce__(self):
        return (eval, ("__import__('os').getcwd()",))


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_malicious_legacy_pickle_is_refused(tmp_path, protocol):
    target = tmp_path / "pwned"
    values = [np.zeros((3, 2)), Evil(target), {"a": 0, "UUUNKKK": 1}]
    (tmp_path / "evil.pickle").write_bytes(pickle.dumps(values, protocol=protocol))
    with pytest.raises(UnsafePickleError, match=r"refusing to load .*evil\.pickle.*'(posix|nt|os)\.system'"):
        load_legacy_pickle(tmp_path / "evil.pickle")
    with pytest.raises(UnsafePickleError, match="nothing was executed"):
        convert_paranmt50m(tmp_path / "evil.pickle")
    assert not target.exists()


def test_eval_global_is_refused(tmp_path):
    (tmp_path / "evil.pickle").write_bytes(pickle.dumps([EvalEvil(), {}], protocol=2))
    with pytest.raises(UnsafePickleError, match=r"builtin(s|__)\.eval"):
        load_legacy_pickle(tmp_path / "evil.pickle")


def test_numpy_global_outside_the_allow_list_is_refused(tmp_path):
    (tmp_path / "np.pickle").write_bytes(pickle.dumps([np.load, {}], protocol=2))
    with pytest.raises(UnsafePickleError, match="numpy.load"):
        load_legacy_pickle(tmp_path / "np.pickle")


def test_plain_pickle_loads(tmp_path):
    values = [np.arange(6, dtype=np.float64).reshape(3, 2), np.float32(1.5), {"a": 0, "b": 1}, ("x", {"y": 2})]
    (tmp_path / "ok.pickle").write_bytes(pickle.dumps(values, protocol=2))
    loaded = load_legacy_pickle(tmp_path / "ok.pickle")
    np.testing.assert_array_equal(loaded[0], values[0])
    assert loaded[1:] == values[1:]


def test_restricted_unpickler_custom_allow_list(tmp_path):
    (tmp_path / "s.pickle").write_bytes(pickle.dumps({1, 2}, protocol=2))
    with open(tmp_path / "s.pickle", "rb") as f, pytest.raises(UnsafePickleError):
        RestrictedUnpickler(f, allowed=set()).load()


def test_malicious_torch_checkpoint_is_refused(tmp_path):
    target = tmp_path / "pwned"
    ckpt = {"state_dict": {"embedding.weight": torch.zeros(3, 2)}, "vocab": {"UUUNKKK": 0},
            "vocab_fr": None, "args": argparse.Namespace(model="avg"), "optimizer": Evil(target), "epoch": 1}
    torch.save(ckpt, tmp_path / "evil.pt")
    with pytest.raises(UnsafePickleError, match=r"refusing to load .*evil\.pt.*nothing was executed"):
        load_torch_checkpoint(tmp_path / "evil.pt", [argparse.Namespace])
    with pytest.raises(UnsafePickleError):
        load_pras_checkpoint(tmp_path / "evil.pt")
    with pytest.raises(UnsafePickleError):
        convert_pras(tmp_path / "evil.pt", tmp_path / "unused.model")
    assert not target.exists()


def test_namespace_is_only_allowed_when_asked(tmp_path):
    torch.save({"args": argparse.Namespace(dim=3), "w": torch.ones(2)}, tmp_path / "ns.pt")
    with pytest.raises(UnsafePickleError, match="argparse"):
        load_torch_checkpoint(tmp_path / "ns.pt")
    assert load_torch_checkpoint(tmp_path / "ns.pt", [argparse.Namespace])["args"].dim == 3
    with pytest.raises(UnsafePickleError):  # the allowance does not outlive the call
        load_torch_checkpoint(tmp_path / "ns.pt")
