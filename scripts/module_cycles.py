#!/usr/bin/env python3
"""Finds import circles between the modules of each crate (standard library only).

A module depends on another when it names it: `use crate::a::b`, `crate::a::b::f(...)`,
`super::x`. Every dependency is lifted to the two sibling modules it crosses (the children of
the deepest module that holds both ends), so `analysis::insight::idle` naming
`analysis::compare::steps` is an edge `insight -> compare` under `analysis`. A module naming its
own ancestor (a child using its parent's types) is not an edge. Test code (`#[cfg(test)]`
modules and `tests.rs` files) is left out. Any circle among siblings is printed with one `use`
behind each edge, and the exit status is 1.

    python3 scripts/module_cycles.py            # every crate of the workspace
    python3 scripts/module_cycles.py crates/warpscope-live
    python3 scripts/module_cycles.py --self-test   # the check on a made-up crate
"""

import os
import re
import sys

ROOTS = ["crates/warpscope-core", "crates/warpscope-ui", "crates/warpscope-live",
         "crates/warpscope-parquet", "."]

# Circles known and left for now, with who resolves them: printed, not failed (none since
# 2026-11-29).
KNOWN = set()

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", re.M)
USE_STMT = re.compile(r"\buse\s+([^;]+);", re.S)
INLINE_PATH = re.compile(r"\b((?:crate|super|self)(?:::" + IDENT + r")+)")
CFG_TEST = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+"
                      + IDENT + r"\s*[{;]")
COMMENT = re.compile(r"//[^\n]*")


def strip_tests(text):
    """The text without `#[cfg(test)]` modules (a `mod x;` line, or a `mod x { ... }` block)."""
    while True:
        m = CFG_TEST.search(text)
        if not m:
            return text
        end = m.end()
        if text[end - 1] == "{":
            depth = 1
            while end < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
        text = text[: m.start()] + text[end:]


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs dropped)."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, s):
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:i])
                start = i + 1
        parts.append(s[start:])
        for part in filter(None, parts):
            brace = part.find("{")
            if brace >= 0 and part.endswith("}"):
                head = part[:brace].rstrip(":")
                walk(prefix + ([head] if head else []), part[brace + 1:-1])
            else:
                name = part.split("as")[0] if "as" in part.split("::")[-1] else part
                out.append("::".join(prefix + [name]).rstrip(":*").rstrip(":"))

    walk([], tree)
    return out


def modules(src):
    """Module path (tuple) -> file, from `src/lib.rs` or `src/main.rs` following `mod x;`."""
    found = {}

    def visit(path, file):
        found[path] = file
        text = strip_tests(COMMENT.sub("", open(file, encoding="utf-8").read()))
        base = os.path.dirname(file)
        name = os.path.basename(file)
        if name not in ("lib.rs", "main.rs", "mod.rs"):
            base = os.path.join(base, name[:-3])
        for m in MOD_DECL.finditer(text):
            child = m.group(1)
            if child == "tests" or child.endswith("_tests"):
                continue
            for cand in (os.path.join(base, child + ".rs"), os.path.join(base, child, "mod.rs")):
                if os.path.exists(cand):
                    visit(path + (child,), cand)
                    break

    for root in ("lib.rs", "main.rs"):
        f = os.path.join(src, root)
        if os.path.exists(f):
            visit((), f)
    return found


def reexports(known):
    """Module -> {name: path it re-exports} from its `pub use` lines."""
    out = {}
    for here, file in known.items():
        text = strip_tests(COMMENT.sub("", open(file, encoding="utf-8").read()))
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
            for p in expand_use(m.group(1)):
                first = p.split("::")[0]
                if first not in ("crate", "super", "self"):
                    p = "self::" + p  # a child module of `here`
                out.setdefault(here, {})[p.split("::")[-1]] = p
    return out


def resolve(path, here, known, reexported, hops=0):
    """The module that defines what `path` (a `crate::`/`super::`/`self::` path) names,
    following `pub use` re-exports."""
    parts = path.split("::")
    if parts[0] == "crate":
        cur, rest = (), parts[1:]
    else:
        cur = here
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                cur = cur[:-1]
            parts = parts[1:]
        rest = parts
    for i, p in enumerate(rest):
        if cur + (p,) in known:
            cur = cur + (p,)
            continue
        via = reexported.get(cur, {}).get(p)
        if via and hops < 8 and i == len(rest) - 1:
            return resolve(via, cur, known, reexported, hops + 1)
        break
    return cur


def edges(src):
    known = modules(src)
    reexported = reexports(known)
    out = {}
    for here, file in known.items():
        text = strip_tests(COMMENT.sub("", open(file, encoding="utf-8").read()))
        paths = []
        for m in USE_STMT.finditer(text):
            paths += [p for p in expand_use(m.group(1)) if p.split("::")[0] in ("crate", "super", "self")]
        paths += [m.group(1) for m in INLINE_PATH.finditer(text)]
        for p in paths:
            target = resolve(p, here, known, reexported)
            # The deepest common ancestor, then the two children of it on each side.
            k = 0
            while k < min(len(here), len(target)) and here[k] == target[k]:
                k += 1
            if k == len(target) or k == len(here):
                continue  # an ancestor or a descendant: not between siblings
            a, b = here[: k + 1], target[: k + 1]
            out.setdefault((a, b), (file, p))
    return out


def cycles(graph_edges):
    """Strongly connected components with more than one module (Tarjan)."""
    graph = {}
    for a, b in graph_edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return comps


def self_test():
    """The check finds a circle it is shown, and none in test code or between parent and child."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        os.makedirs(os.path.join(src, "a"))
        files = {
            "lib.rs": "mod a;\nmod b;\nmod c;\npub use a::inner::Thing;\n",
            "a/mod.rs": "pub mod inner;\nuse crate::c::C;\n",
            "a/inner.rs": "pub struct Thing;\nuse super::super::b::{self, B};\n",
            "b.rs": "pub struct B;\nfn f() { crate::Thing; }\n"
                    "#[cfg(test)]\nmod tests {\n    use crate::c::C;\n}\n",
            "c.rs": "pub struct C;\n",
        }
        for name, text in files.items():
            with open(os.path.join(src, name), "w", encoding="utf-8") as f:
                f.write(text)
        found = cycles(edges(src))
        assert found == [[("a",), ("b",)]], found
        # Test code does not count: c -> b only from a test module of b.
        assert (("b",), ("c",)) not in edges(src), edges(src)
    print("self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    roots = sys.argv[1:] or ROOTS
    bad = 0
    for root in roots:
        src = os.path.join(root, "src")
        e = edges(src)
        for comp in cycles(e):
            names = ", ".join("::".join(m) for m in comp)
            known = (root, names) in KNOWN
            bad += not known
            print(f"{root}: {'known ' if known else ''}circle between {names}")
            members = set(comp)
            for (a, b), (file, p) in sorted(e.items()):
                if a in members and b in members:
                    print(f"  {'::'.join(a)} -> {'::'.join(b)}: {file} names {p}")
    if bad:
        return 1
    print(f"no new module circles in {', '.join(roots)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
