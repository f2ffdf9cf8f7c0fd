"""The compiled grading core (``python -m toolproof.native``): used only while it matches
its sources, and grading the same with it as without it."""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolproof._shared.native import GROUP, MANIFEST, NATIVE, native_state, source_digests

ROOT = Path(__file__).resolve().parents[1]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _fake_package(tmp_path: Path) -> Path:
    """A folder shaped like the package, with the set's sources."""
    root = tmp_path / "toolproof"
    for module in NATIVE:
        path = root.joinpath(*module.split(".")[1:]).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {module}\n")
    return root


def _fake_compile(root: Path) -> None:
    for module in NATIVE:
        source = root.joinpath(*module.split(".")[1:]).with_suffix(".py")
        source.with_name(source.stem + SUFFIX).write_bytes(b"")
    (root.parent / f"{GROUP}__mypyc{SUFFIX}").write_bytes(b"")
    manifest = {"cache_tag": sys.implementation.cache_tag, "sources": source_digests(root)}
    (root / MANIFEST).write_text(json.dumps(manifest))


def test_the_state_follows_the_files_and_the_manifest(tmp_path: Path) -> None:
    root = _fake_package(tmp_path)
    assert native_state(root)[0] == "none"
    _fake_compile(root)
    assert native_state(root) == ("current", "every module compiled from its present source")
    answer = root / "grade" / "_answer.py"
    answer.write_text("# changed\n")
    assert native_state(root) == ("stale", "toolproof/grade/_answer.py changed")
    _fake_compile(root)
    (root / "match" / f"_bfcl{SUFFIX}").unlink()
    assert native_state(root) == ("stale", "toolproof.match._bfcl is not compiled")
    _fake_compile(root)
    (root.parent / f"{GROUP}__mypyc{SUFFIX}").unlink()
    assert native_state(root)[0] == "stale"
    _fake_compile(root)
    (root / MANIFEST).write_text("{not json")
    assert native_state(root) == ("stale", f"no readable {MANIFEST}")
    _fake_compile(root)
    manifest = json.loads((root / MANIFEST).read_text())
    (root / MANIFEST).write_text(json.dumps({**manifest, "cache_tag": "cpython-00"}))
    assert native_state(root) == ("stale", "built for cpython-00")


def _python(code: str, path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(path), **env},
    )


#: Every verdict of the bundled example's records and of a generated mix, as text.
VERDICTS = f"""
import sys, tempfile
from pathlib import Path
sys.path.append({str(ROOT / "bench")!r})
from grading_mix import make_mix
import toolproof.grade._score as score
from toolproof.grade import Scorer
from toolproof.records import read_records
print(score.__file__)
with tempfile.TemporaryDirectory() as tmp:
    suite, path = make_mix(300, 3_000, Path(tmp))
    scorer = Scorer(suite)
    for r in read_records(path):
        v = scorer.grade(r)
        print(repr(v if v is None else v._replace(evidence=v.evidence.closest)))
"""


@pytest.mark.slow
def test_the_compiled_core_grades_as_the_sources_do_and_steps_aside_when_stale(
    tmp_path: Path,
) -> None:
    if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: the compiled core cannot be built here")
    copy = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "toolproof",
        copy / "toolproof",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", MANIFEST),
    )
    built = _python("from toolproof.native import main; main(['build'])", copy)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "compiled grading core: built and used" in built.stdout, built.stdout

    compiled = _python(VERDICTS, copy)
    plain = _python(VERDICTS, copy, TOOLPROOF_NATIVE="0")
    assert compiled.returncode == plain.returncode == 0, compiled.stderr + plain.stderr
    first, *verdicts = compiled.stdout.splitlines()
    assert first.endswith(SUFFIX), first  # the compiled module graded
    assert plain.stdout.splitlines()[0].endswith("_score.py")
    assert len(verdicts) == 3_000 and verdicts == plain.stdout.splitlines()[1:]
    assert compiled.stderr == plain.stderr == ""

    # a matcher defined outside toolproof still subclasses the compiled Matcher
    outside = _python(
        "from toolproof.match import Matcher\n"
        "import toolproof.match._matchers as m\n"
        "class Mine(Matcher):\n"
        "    def check(self, actual):\n"
        "        return None if actual == 'x' else 'not x'\n"
        "print(m.__file__, Mine().ok('x'), Mine().ok('y'))\n",
        copy,
    )
    assert outside.returncode == 0, outside.stderr
    assert outside.stdout.split()[1:] == ["True", "False"]
    assert outside.stdout.split()[0].endswith(SUFFIX), outside.stdout

    # a source changed after the build: the sources grade, and it is said once
    with (copy / "toolproof" / "match" / "_bfcl.py").open("a") as fh:
        fh.write("# changed\n")
    stale = _python(VERDICTS, copy)
    assert stale.returncode == 0, stale.stderr
    assert stale.stdout.splitlines()[0].endswith("_score.py")
    assert stale.stdout.splitlines()[1:] == verdicts
    assert stale.stderr.count("the compiled grading core is out of date") == 1
    assert "toolproof/match/_bfcl.py changed" in stale.stderr

    cleaned = _python("from toolproof.native import main; main(['clean'])", copy)
    assert "compiled grading core: not built" in cleaned.stdout, cleaned.stdout
    assert not list(copy.rglob("*.so")) and not (copy / "toolproof" / MANIFEST).exists()
