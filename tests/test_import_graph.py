"""No import circle anywhere in ``src/agentmsg``, lazy imports included.

Every module is parsed with :mod:`ast` and every ``import`` statement in it counts, wherever it
stands: at the top, inside a function, under ``if TYPE_CHECKING:``. A lazy import that dodges a
circle at run time is still a circle in the design (STYLE.md: move the shared piece down a floor).

``from package import name`` is an edge to ``package.name`` when that is a module, else to
``package``. Importing a submodule also runs its parent packages' ``__init__``, but that edge is
not counted: otherwise every submodule would "depend" on the package that re-exports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
ROOT = "agentmsg"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(module: str, level: int, current: str, is_package: bool) -> str:
    if level == 0:
        return module
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def import_graph() -> dict[str, set[str]]:
    """Each agentmsg module -> the agentmsg modules it imports anywhere in its text."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node.module or "", node.level, name, is_package)
                for alias in node.names:
                    child = f"{base}.{alias.name}"
                    targets.append(child if child in modules else base)
            for imported in targets:
                # `import agentmsg.x.y` names the deepest module that exists.
                target = imported
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_circle_in_agentmsg() -> None:
    graph = import_graph()
    cycles = find_cycles(graph)
    described = [
        " <-> ".join(cycle) + ": " + "; ".join(f"{m} -> {sorted(graph[m] & set(cycle))}" for m in cycle)
        for cycle in cycles
    ]
    assert not cycles, "import circles:\n" + "\n".join(described)


def test_the_walker_sees_lazy_and_type_checking_imports() -> None:
    """The checker itself: a circle made only of a lazy and a TYPE_CHECKING import is found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    source = "def f():\n    from agentmsg import x\nif TYPE_CHECKING:\n    import agentmsg.y\n"
    seen = {
        alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert seen == {"agentmsg.x", "agentmsg.y"}


def test_the_graph_covers_the_service_and_core() -> None:
    graph = import_graph()
    assert "agentmsg.content" in graph
    assert "agentmsg.service.stores.base" in graph
    assert "agentmsg.errors" in graph["agentmsg.content"]
