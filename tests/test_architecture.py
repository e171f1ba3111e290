"""The package's shape, pinned: no import cycles at module level, the environment read only by
config.py, the whole error tree in errors.py, and no module past the agreed size."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_core

PACKAGE = Path(hermes_core.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _module_level_imports(tree: ast.Module, modules: dict[str, Path]) -> set[str]:
    """hermes_core modules imported when the module loads (not under TYPE_CHECKING, not in a
    function: those do not run at import time and cannot form a load cycle)."""
    found: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
            for h in node.handlers:
                stack.extend(h.body)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in modules:
                    found.add(full)
                elif node.module in modules:
                    found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
    return found


def test_no_module_level_import_cycles() -> None:
    modules = _modules()
    graph = {m: _module_level_imports(ast.parse(p.read_text(encoding="utf-8")), modules)
             for m, p in modules.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycles.append([*path[path.index(n):], n] if n in path else [m, n])
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    # a package's __init__ importing its own children is how a package exposes its API
    real = [c for c in cycles if not all(x == c[0] or x.startswith(c[0] + ".") for x in c)]
    assert real == []


def test_only_config_reads_the_environment() -> None:
    readers = []
    for name, path in _modules().items():
        if name == "hermes_core.config":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = ast.unparse(node) if isinstance(node, ast.Call | ast.Subscript) else ""
            if ("os.environ.get(" in text or "os.getenv(" in text or text.startswith("os.environ[")):
                readers.append(f"{name}: {text[:60]}")
    assert readers == []


def test_every_error_class_lives_in_errors_py() -> None:
    outside = []
    for name, path in _modules().items():
        if name == "hermes_core.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                if bases & {"HermesError", "ProviderError", "ConfigError"} or any(
                        b.endswith("Error") and b.startswith("errors.") for b in bases):
                    outside.append(f"{name}.{node.name}")
    assert outside == []



def test_no_module_is_past_the_agreed_size() -> None:
    sizes = {name: len(p.read_text(encoding="utf-8").splitlines()) for name, p in _modules().items()}
    assert {n: s for n, s in sizes.items() if s > 800} == {}


#: Top-level modules allowed a subsystem's module at load: config validates routing rules as it
#: reads them (a check the settings need, not a helper the subsystem lends).
_UPWARD_ALLOWED = {"hermes_core.config": {"hermes_core.agent.routing.rules"}}


def test_a_top_level_module_imports_no_subsystem_s_helper() -> None:
    """The top-level modules (``hermes_core/*.py``) are what every subsystem builds on; one that
    imports from a subsystem ties the layer below to the layer above (``kept_table`` took its
    event-loop check from ``agent.pool.off_loop``)."""
    modules = _modules()
    upward = {}
    for name, path in modules.items():
        if path.parent != PACKAGE or path.name == "__init__.py":
            continue
        imported = _module_level_imports(ast.parse(path.read_text(encoding="utf-8")), modules)
        subsystem = {m for m in imported if m.count(".") > 1 or (modules[m].name == "__init__.py"
                                                                 and m != "hermes_core")}
        if extra := subsystem - _UPWARD_ALLOWED.get(name, set()):
            upward[name] = sorted(extra)
    assert upward == {}
