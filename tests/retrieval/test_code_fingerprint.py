"""What the code fingerprints of the restart caches read: the libraries' releases included."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from importlib import metadata

import pytest

from hermes_core.retrieval import code_fingerprint
from hermes_core.retrieval.code_fingerprint import imported_releases


@pytest.fixture
def fresh_lookups() -> Iterator[None]:
    """The releases and distribution lists looked up afresh, and forgotten after (a name faked
    here must not stay cached for the tests after, pass or fail)."""
    code_fingerprint._installed.cache_clear()
    code_fingerprint._packages.cache_clear()
    yield
    code_fingerprint._installed.cache_clear()
    code_fingerprint._packages.cache_clear()


def _importing(*libraries: types.ModuleType) -> types.ModuleType:
    m = types.ModuleType("importing_under_test")
    for lib in libraries:
        setattr(m, lib.__name__, lib)
    return m


def test_a_library_whose_distribution_has_another_name_is_salted_with_its_release() -> None:
    # pyahocorasick installs the module ahocorasick, with no __version__: its release was "-"
    import ahocorasick

    assert not hasattr(ahocorasick, "__version__")
    salt = imported_releases([_importing(ahocorasick)])
    assert salt == f"ahocorasick=pyahocorasick {metadata.version('pyahocorasick')}"


def test_a_library_named_as_its_distribution_or_with_a_version_is_read_as_before() -> None:
    import numpy
    import simplemma

    salt = imported_releases([_importing(numpy, simplemma)])
    assert salt == f"numpy={numpy.__version__}\x00simplemma={simplemma.__version__}"


def test_an_import_no_installed_distribution_provides_reads_as_a_dash(
        monkeypatch: pytest.MonkeyPatch, fresh_lookups: None) -> None:
    module = types.ModuleType("no_such_library_here")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    assert imported_releases([_importing(module)]) == "no_such_library_here=-"


def test_a_library_a_module_loads_lazily_into_a_global_salts_alike_before_and_after_the_load() -> None:
    # tokenize binds jieba to a global only once Chinese is segmented: a process that segmented a
    # Chinese query before saving salted its files with jieba's release, and the next process
    # (no Chinese read yet) refused them at every start
    module = types.ModuleType("loading_lazily_under_test")
    exec(compile("_lib = None\n"
                 "def load():\n"
                 "    global _lib\n"
                 "    import snowballstemmer as lib\n"
                 "    _lib = lib\n", module.__name__, "exec"), vars(module))
    before = imported_releases([module])
    module.load()
    assert imported_releases([module]) == before
    assert before == f"snowballstemmer={metadata.version('snowballstemmer')}"


def test_imports_no_distribution_provides_scan_the_installed_files_once_a_process(
        monkeypatch: pytest.MonkeyPatch, fresh_lookups: None) -> None:
    # each such import read every distribution's file list again (0.6-0.9 s here); a library a
    # function imports is salted even when missing, so a broken install paid it per library
    scans: list[int] = []
    real = metadata.packages_distributions

    def counted() -> object:
        scans.append(1)
        return real()

    monkeypatch.setattr(code_fingerprint.metadata, "packages_distributions", counted)
    modules = [types.ModuleType(f"no_such_library_{i}") for i in range(3)]
    for m in modules:
        monkeypatch.setitem(sys.modules, m.__name__, m)
    assert imported_releases([_importing(*modules)]).count("=-") == 3
    assert len(scans) == 1


@pytest.mark.parametrize("load", ['importlib.import_module("snowballstemmer")',
                                  '__import__("snowballstemmer")'])
def test_a_library_a_module_loads_by_name_into_a_global_salts_alike_before_and_after_the_load(
        load: str) -> None:
    # only an import statement was read from the bytecode: a library loaded by
    # importlib.import_module or __import__ entered the salt once bound, so a file saved after
    # the load was refused by the next process that had not loaded it yet
    module = types.ModuleType("loading_by_name_under_test")
    exec(compile("import importlib\n"
                 "_lib = None\n"
                 "def load():\n"
                 "    global _lib\n"
                 f"    _lib = {load}\n", module.__name__, "exec"), vars(module))
    before = imported_releases([module])
    module.load()
    assert imported_releases([module]) == before
    assert before == f"snowballstemmer={metadata.version('snowballstemmer')}"
