from __future__ import annotations

import toolproof.run as run


def test_all_names_exist_once() -> None:
    for name in run.__all__:
        assert hasattr(run, name), name
    assert len(set(run.__all__)) == len(run.__all__)


def test_every_public_name_is_exported() -> None:
    public = {n for n, v in vars(run).items() if not n.startswith("_") and not _is_module(v)}
    assert public <= set(run.__all__), sorted(public - set(run.__all__))


def _is_module(value: object) -> bool:
    return type(value).__name__ == "module"
