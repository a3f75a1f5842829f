#!/usr/bin/env python3
"""Import cycles between the top-level modules of a crate, measured from its paths.

Each file under SRC belongs to a top-level module: its first path component under
SRC (a folder counts as one module, `foo.rs` as `foo`). An edge A -> B is any
`crate::B` path in A's code (in `use` items, inline paths and macros alike),
tests included, since a test-only edge is still an edge a newcomer must know of.
`lib.rs`/`main.rs` are the roots and are left out: re-exports are not layers.

Prints the edges that take part in a cycle and each strongly connected component
of more than one module; exits 1 if there is one.

    python3 scripts/import_cycles.py src ndnpy-cli/src ndnpy-parquet/src
"""
import os
import re
import sys

PATH = re.compile(r"\bcrate::(?:\{\s*)?([A-Za-z_][A-Za-z0-9_]*)")


def group_heads(text):
    """First names of the items of every `crate::{...}` group, nested groups allowed."""
    heads = set()
    for m in re.finditer(r"\bcrate::\{", text):
        depth, i, item = 1, m.end(), ""
        while i < len(text) and depth:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            if depth == 1 and c == ",":
                heads.add(item.strip().split("::")[0].strip())
                item = ""
            elif depth >= 1:
                item += c
            i += 1
        heads.add(item.strip().split("::")[0].strip("{} \n"))
    return {h for h in heads if h}


def module_of(root, path):
    rel = os.path.relpath(path, root)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def top_modules(root):
    """The crate's top-level modules: its files and folders beside the root."""
    found = set()
    for f in os.listdir(root):
        if f.endswith(".rs") and f not in ("lib.rs", "main.rs"):
            found.add(f[:-3])
        elif os.path.isdir(os.path.join(root, f)):
            found.add(f)
    return found


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def root_names(root):
    """Names the crate root re-exports, mapped to the module they come from, so that
    a `crate::Error` path counts as an edge to `error`."""
    names = {}
    for entry in ("lib.rs", "main.rs"):
        p = os.path.join(root, entry)
        if not os.path.exists(p):
            continue
        text = strip_comments(open(p, encoding="utf-8").read())
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([A-Za-z_][A-Za-z0-9_]*)::([^;]*);", text, re.S):
            module, rest = m.group(1), m.group(2)
            if module in ("crate", "self"):
                continue
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", rest.split("::")[-1] if "{" not in rest else rest[rest.index("{"):]):
                names.setdefault(name, module)
    return names


def graph(root):
    mods = set()
    edges = {}
    aliases = root_names(root)
    tops = top_modules(root)
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            p = os.path.join(dirpath, f)
            m = module_of(root, p)
            if m in ("lib", "main"):
                continue
            mods.add(m)
            text = strip_comments(open(p, encoding="utf-8").read())
            targets = set(PATH.findall(text)) | group_heads(text)
            for t in targets:
                t = t if t in tops else aliases.get(t, t)
                if t != m:
                    edges.setdefault(m, set()).add(t)
    for m in edges:
        edges[m] &= mods
    return mods, edges


def sccs(mods, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(mods):
        if v not in index:
            visit(v)
    return out


def main():
    bad = False
    for root in sys.argv[1:] or ["src"]:
        mods, edges = graph(root)
        comps = [c for c in sccs(mods, edges) if len(c) > 1]
        print(f"{root}: {len(mods)} modules, {sum(len(e) for e in edges.values())} edges, "
              f"{len(comps)} cycle(s)")
        for c in comps:
            bad = True
            print(f"  cycle of {len(c)}: {', '.join(c)}")
            for a in c:
                for b in sorted(edges.get(a, ())):
                    if b in c:
                        print(f"    {a} -> {b}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
