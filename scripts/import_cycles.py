#!/usr/bin/env python3
"""Import cycles in a crate, measured from its paths: between folders, and between files.

Folders. Each file under SRC belongs to a top-level module: its first path
component under SRC (a folder counts as one module, `foo.rs` as `foo`). An edge
A -> B is any path into B from A's code (in `use` items, inline paths and macros
alike), tests included, since a test-only edge is still an edge a newcomer must
know of. `lib.rs`/`main.rs` are the roots and are left out of this level:
re-exports are not layers.

Files. Every `.rs` file is a node, the roots included. An edge F -> G is a path
in F (a `use` item, or an inline path such as `crate::a::b::f()`, `super::X`,
`self::m::Y`, `child::Z` or one through a name a `use` bound) whose item lives in
G: the path is followed through modules, then through the `use` items (re-exports)
of the module it stops in, to the file that defines the item. A path that names a
module (`use super::reader;`) is an edge to that module's file. A `mod` declaration
is not an edge (a parent is not made to depend on its children by declaring them),
and neither is a re-export (`pub use child::X`, `pub(crate) use ..`): it forwards a
name, and whoever uses the name through it gets the edge to the defining file,
and one to the file the path passes through (a reader of `super::source::f`
sees `source.rs` imported, wherever `f` lives); the crate root's re-exports,
the public face, aside. `super` inside an inline `mod tests { .. }`
is the file itself, so a file's own tests add no edge to its parent.

Prints every cycle (strongly connected component of more than one node) with its
edges, and exits 1 if there is a folder cycle, or a file cycle with an edge that
ALLOWED below does not list. Any new circle has at least one edge that was on no
circle before, so it fails, whatever files it passes through.

    python3 scripts/import_cycles.py src ndnpy-cli/src ndnpy-parquet/src ndnpy-store/src
"""
import os
import re
import sys

# Edges of file circles that stay for now, as (from, to) paths relative to the
# repository root (the folder above this script). A circle passes only when every
# one of its edges is listed here. Entries no longer found are reported as stale
# (remove them), but do not fail: the circles they closed are gone.
ALLOWED = {
    # The AnyArray/Element recursion in src/array/: `AnyArray` holds arrays of
    # any `Element`, and object values and records hold `AnyArray`s in turn (the
    # encoders and decoders follow the same recursion). Permitted; it may stay.
    ("src/array/any.rs", "src/array/decode.rs"),
    ("src/array/any.rs", "src/array/element.rs"),
    ("src/array/any.rs", "src/array/encode.rs"),
    ("src/array/any.rs", "src/array/ml.rs"),
    ("src/array/any.rs", "src/array/pyvalue/mod.rs"),
    ("src/array/any.rs", "src/array/record.rs"),
    ("src/array/any.rs", "src/array/stringdtype.rs"),
    ("src/array/decode.rs", "src/array/any.rs"),
    ("src/array/decode.rs", "src/array/element.rs"),
    ("src/array/decode.rs", "src/array/transpose.rs"),
    ("src/array/element.rs", "src/array/any.rs"),
    ("src/array/element.rs", "src/array/decode.rs"),
    ("src/array/element.rs", "src/array/encode.rs"),
    ("src/array/element.rs", "src/array/pyvalue/mod.rs"),
    ("src/array/encode.rs", "src/array/any.rs"),
    ("src/array/encode.rs", "src/array/element.rs"),
    ("src/array/encode.rs", "src/array/record.rs"),
    ("src/array/ml.rs", "src/array/any.rs"),
    ("src/array/ml.rs", "src/array/decode.rs"),
    ("src/array/ml.rs", "src/array/element.rs"),
    ("src/array/pyvalue/foreign.rs", "src/array/pyvalue/mod.rs"),
    ("src/array/pyvalue/mod.rs", "src/array/any.rs"),
    ("src/array/pyvalue/mod.rs", "src/array/decode.rs"),
    ("src/array/pyvalue/mod.rs", "src/array/pyvalue/foreign.rs"),
    ("src/array/record.rs", "src/array/any.rs"),
    ("src/array/record.rs", "src/array/decode.rs"),
    ("src/array/record.rs", "src/array/element.rs"),
    ("src/array/record.rs", "src/array/encode.rs"),
    ("src/array/record.rs", "src/array/pyvalue/mod.rs"),
    ("src/array/stringdtype.rs", "src/array/pyvalue/mod.rs"),
    ("src/array/transpose.rs", "src/array/element.rs"),
}

PATH = re.compile(r"\bcrate::(?:\{\s*)?([A-Za-z_][A-Za-z0-9_]*)")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- folder level


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


# ------------------------------------------------------------------ file level

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|[{}();,*<>=!#\[\]]|\S")
ITEM_KINDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}


def lex(text):
    """Tokens of Rust source as (text, line), without comments, strings and chars
    (their braces and `::` would confuse the walk)."""
    out, i, n, line = [], 0, len(text), 1
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif re.match(r'b?r#*"', text[i:i + 260]):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            line += text.count("\n", i, j)
            i = j
        elif c == '"' or text.startswith('b"', i):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            i = j + 1
        elif c == "'" or text.startswith("b'", i):
            # A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            j = i + (2 if c == "b" else 1)
            m = re.match(r"\\u\{[0-9a-fA-F_]*\}'|\\.'|[^\\']'", text[j:j + 12], re.S)
            if m:
                i = j + m.end()
            else:
                m = ident.match(text, j)
                i = m.end() if m else j
        else:
            m = TOKEN.match(text, i)
            tok = m.group(0)
            if tok[0].isdigit():
                m = re.match(r"[0-9][A-Za-z0-9_.]*", text[i:])
                tok = m.group(0)
                i += len(tok)
                continue
            out.append((tok, line))
            i = m.end()
    return out


class File:
    def __init__(self, path, module):
        self.path = path
        self.module = module  # tuple of names from the crate root
        self.uses = []  # (scope module, tree paths, line, re-export): every `use` item
        self.paths = []  # (scope module, segments, line): inline paths
        self.inline = set()  # inline modules declared in this file (full module paths)
        self.macros = set()  # `macro_rules!` names defined here


def file_module(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def use_tree(toks, i, prefix, out):
    """Parses a use tree from toks[i]; appends (segments, bound name or None, glob)
    to out; returns the index after it."""
    segs = list(prefix)
    while i < len(toks):
        t = toks[i][0]
        if t == "{":
            i += 1
            while i < len(toks) and toks[i][0] != "}":
                i = use_tree(toks, i, segs, out)
                if i < len(toks) and toks[i][0] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append((segs, None, True))
            return i + 1
        if t == "::":
            i += 1
            continue
        if re.match(r"[A-Za-z_]", t):
            segs = segs + [t]
            i += 1
            if i < len(toks) and toks[i][0] == "::":
                continue
            bound = t
            if i + 1 < len(toks) and toks[i][0] == "as":
                bound = toks[i + 1][0]
                i += 2
            if segs[-1] == "self":
                segs = segs[:-1]
                bound = bound if bound != "self" else (segs[-1] if segs else None)
            out.append((segs, bound, False))
            return i
        return i + 1
    return i


def scan(root, path):
    """One pass over a file: its `use` items, inline paths, inline modules and the
    names it defines at module level (per inline module)."""
    f = File(path, file_module(root, path))
    toks = lex(open(path, encoding="utf-8").read())
    defs = {}
    stack = []  # per open brace: the inline module's name, or None
    pending_mod = None
    i = 0
    while i < len(toks):
        t, line = toks[i]
        scope = f.module + tuple(s for s in stack if s is not None)
        at_module_level = all(s is not None for s in stack)
        prev = toks[i - 1][0] if i else ""
        if t == "{":
            stack.append(pending_mod)
            if pending_mod is not None:
                f.inline.add(scope + (pending_mod,))
            pending_mod = None
            i += 1
            continue
        if t == "}":
            if stack:
                stack.pop()
            i += 1
            continue
        if t == ";":
            pending_mod = None
        if t == "mod" and i + 1 < len(toks) and prev != "::":
            pending_mod = toks[i + 1][0]
            i += 2
            continue
        if t == "use" and prev != "::":
            tree = []
            j = use_tree(toks, i + 1, [], tree)
            # `pub use`, `pub(crate) use`: a re-export, which forwards names.
            k = i - 1
            if k >= 0 and toks[k][0] == ")":
                while k >= 0 and toks[k][0] != "(":
                    k -= 1
                k -= 1
            reexport = k >= 0 and toks[k][0] == "pub"
            f.uses.append((scope, tree, line, reexport))
            i = j
            continue
        if at_module_level and t in ITEM_KINDS and i + 1 < len(toks) and prev not in ("::", "impl"):
            name = toks[i + 1][0]
            if re.match(r"[A-Za-z_]", name):
                defs.setdefault(scope, set()).add(name)
        if at_module_level and t == "macro_rules" and i + 2 < len(toks):
            defs.setdefault(scope, set()).add(toks[i + 2][0])
            f.macros.add(toks[i + 2][0])
        if re.match(r"[A-Za-z_]", t) and prev != "::" and i + 1 < len(toks) and toks[i + 1][0] == "::":
            segs = [t]
            j = i + 1
            while j + 1 < len(toks) and toks[j][0] == "::" and re.match(r"[A-Za-z_]", toks[j + 1][0]):
                segs.append(toks[j + 1][0])
                j += 2
            if len(segs) > 1:
                f.paths.append((scope, segs, line))
            i = j
            continue
        i += 1
    return f, defs


class Crate:
    def __init__(self, root):
        self.root = root
        self.files = {}
        self.defs = {}  # module -> names defined there
        self.modules = {}  # module -> the file it lives in
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(".rs"):
                    f, defs = scan(root, os.path.join(dirpath, name))
                    self.files[f.path] = f
                    self.modules[f.module] = f.path
                    for m, d in defs.items():
                        self.defs.setdefault(m, set()).update(d)
        self.macros = {}  # macro name -> defining file (`#[macro_export]` puts them at the root)
        for f in self.files.values():
            for m in f.inline:
                self.modules.setdefault(m, f.path)
            for name in f.macros:
                self.macros.setdefault(name, f.path)
        # What each module's `use` items bind: module -> name -> absolute path
        # (None: outside the crate); and its glob imports.
        self.binds, self.globs = {}, {}
        for f in self.files.values():
            for scope, tree, _, _ in f.uses:
                for segs, bound, glob in tree:
                    ab = self.absolute(scope, segs, resolve_binds=False)
                    if glob:
                        if ab is not None:
                            self.globs.setdefault(scope, []).append(ab)
                    elif bound:
                        self.binds.setdefault(scope, {})[bound] = ab

    def absolute(self, scope, segs, resolve_binds=True):
        """The path from the crate root that `segs`, written in module `scope`, names;
        None when it leads outside the crate (std, other crates, local items)."""
        if not segs:
            return None
        head, rest = segs[0], list(segs[1:])
        if head == "crate":
            return tuple(rest)
        if head == "self":
            return scope + tuple(rest)
        if head == "super":
            base = scope
            while head == "super":
                base = base[:-1]
                if not rest:
                    return base
                head, rest = rest[0], rest[1:]
            return base + (head,) + tuple(rest)
        if scope + (head,) in self.modules:
            return scope + (head,) + tuple(rest)
        if resolve_binds:
            b = self.binds.get(scope, {})
            if head in b:
                return None if b[head] is None else b[head] + tuple(rest)
        return None

    def owner(self, ab, seen=None, through=None):
        """The file that defines what absolute path `ab` names; `through`, when
        given, collects the files of the re-exports followed on the way."""
        seen = seen or set()
        if ab in seen:
            return None
        seen.add(ab)
        cur, i = (), 0
        while i < len(ab) and cur + (ab[i],) in self.modules:
            cur += (ab[i],)
            i += 1
        if cur not in self.modules:
            return None
        if i == len(ab):
            return self.modules[cur]
        name = ab[i]
        if name in self.defs.get(cur, ()):
            return self.modules[cur]
        b = self.binds.get(cur, {})
        if name in b:
            if b[name] is None:
                return self.modules[cur]
            if through is not None and self.modules[cur] != self.modules[()]:
                through.add(self.modules[cur])
            got = self.owner(b[name] + tuple(ab[i + 1:]), seen, through)
            return got or self.modules[cur]
        for g in self.globs.get(cur, []):
            sub = g + tuple(ab[i:])
            via = set()
            got = self.owner(sub, seen, via)
            gm = self.modules.get(g)
            if got and (got != gm or name in self.defs.get(g, ())):
                if through is not None:
                    through.update(via)
                    if self.modules[cur] != self.modules[()]:
                        through.add(self.modules[cur])
                return got
        if cur == () and name in self.macros:
            return self.macros[name]
        return self.modules[cur]

    def edges(self):
        """File -> {file: first line in the importing file}."""
        out = {}
        for f in self.files.values():
            found = out.setdefault(f.path, {})
            # A re-export is no edge of its own: what it forwards is charged to
            # the files that use the name (resolved through it to its owner).
            refs = [(scope, segs, line) for scope, tree, line, reexport in f.uses
                    if not reexport for segs, _, _ in tree]
            refs += f.paths
            for scope, segs, line in refs:
                ab = self.absolute(scope, segs)
                if ab is None:
                    continue
                # A path written through a re-export (`super::source::f` where
                # `source.rs` only forwards `f` from `memory.rs`) is also an edge
                # to the file it passes through, as a reader of the code sees
                # it; the crate root's re-exports (the public face) aside.
                through = set()
                target = self.owner(ab, through=through)
                for t in sorted(through | {target} if target else through):
                    if t != f.path:
                        found.setdefault(t, line)
        return out


def rel(path):
    return os.path.relpath(os.path.abspath(path), REPO)


def file_cycles(root, allowed, used):
    """Prints the file circles of one crate; returns True if one has an unlisted edge."""
    crate = Crate(root)
    raw = crate.edges()
    edges = {rel(a): {rel(b): line for b, line in bs.items()} for a, bs in raw.items()}
    nodes = sorted(edges)
    comps = [c for c in sccs(nodes, edges) if len(c) > 1]
    bad = False
    print(f"{root}: {len(nodes)} files, {sum(len(e) for e in edges.values())} edges, "
          f"{len(comps)} file cycle(s)")
    for c in comps:
        members = set(c)
        inner = [(a, b) for a in c for b in sorted(edges.get(a, ())) if b in members]
        unlisted = [e for e in inner if e not in allowed]
        used.update(e for e in inner if e in allowed)
        status = "NEW" if unlisted else "allowed"
        print(f"  file cycle of {len(c)} ({status}): {', '.join(c)}")
        for a, b in inner:
            mark = "" if (a, b) in allowed else "   <- not in ALLOWED"
            print(f"    {a} -> {b} (line {edges[a][b]}){mark}")
        bad |= bool(unlisted)
    return bad


# ------------------------------------------------------------------- both


def sccs(mods, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
    roots = sys.argv[1:] or ["src"]
    allowed = set(ALLOWED)
    used = set()
    for root in roots:
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
        bad |= file_cycles(root, allowed, used)
    checked = tuple(rel(r) + os.sep for r in roots)
    stale = sorted(e for e in allowed - used if e[0].startswith(checked))
    for a, b in stale:
        print(f"  stale ALLOWED entry (no longer on a circle; remove it): {a} -> {b}")
    if bad:
        print("import cycles: FAILED (a folder cycle, or a file circle with an edge not in ALLOWED)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
