"""The package's shape: layers point one way (no import circles, function-level imports included) and no
module of tritonmm/ grows past MAX_LINES. Read from the source with ast: nothing is imported."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAX_LINES = 400


def _modules(package: str) -> dict:
    """{dotted module name: path} of a package's .py files."""
    base = ROOT / package
    found = {}
    for path in base.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: pathlib.Path, known: dict) -> set:
    """The modules of ``known`` that module ``name`` imports anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                root = ".".join(base + ([node.module] if node.module else []))
            else:
                root = node.module
            targets = [root] + [f"{root}.{alias.name}" for alias in node.names]
        else:
            continue
        out.update(t for t in targets if t in known and t != name)
    return out


def _cycle(graph: dict):
    """One import circle of graph as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None
    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


@pytest.mark.parametrize("package", ["tritonmm", "bench", "cuda_reference"])
def test_no_import_circles(package):
    known = _modules(package)
    # A package's __init__ re-exports its modules: an arrow from it down is no circle of the layers.
    graph = {name: {t for t in _imports(name, path, known) if t != package} for name, path in known.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_checker_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_over_the_line_budget():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "tritonmm").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these modules by job (at most {MAX_LINES} lines each): {long}"
