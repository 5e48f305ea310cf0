"""The package layout stays acyclic: no module imports a module that imports it back,
and no subpackage of ``adjit`` depends on one that depends on it. Imports inside
functions count too: a deferred import hides a cycle, it does not remove it."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "adjit"


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_graph():
    """module -> the adjit modules it imports, at top level or inside a function."""
    paths = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    deps.add(full if full in paths else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in paths and d != name}
    return graph


def _cycle(graph):
    """One cycle of ``graph`` as a list of nodes, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, path + [dep])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def test_no_module_import_cycle():
    assert _cycle(_import_graph()) is None


def test_no_subpackage_import_cycle():
    def package(name):
        return ".".join(name.split(".")[:2])

    packages = {}
    for name, deps in _import_graph().items():
        for dep in deps:
            if package(dep) != package(name) and package(name) != "adjit":
                packages.setdefault(package(name), set()).add(package(dep))
    assert _cycle(packages) is None, _cycle(packages)
