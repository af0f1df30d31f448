#!/usr/bin/env python3
"""Every repository path the docs name exists.

Reads README.md, docs/*.md and the other READMEs under src/, and checks each
path written in backquotes that starts with one of the repository's top-level
folders (`src/zero/engine.hpp`, `kernels/quant/quant_fp8*`, `src/zero/engine.*`,
`scripts/test --quick`, `src/zero/shard.hpp:12`). A glob must match at least one
file. Prints one line per missing path (file:line: path) and exits 1 if any.
"""
import fnmatch
import glob
import os
import re
import sys

root = os.environ.get("ZEROPP_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ignored_folders():
    """The folder patterns .gitignore names (`/build*/`, `runs/`, `data/`): what runs
    and builds create in the checkout, never repository paths, though a doc may name
    them (`runs/default/metrics.h5`)."""
    with open(os.path.join(root, ".gitignore"), encoding="utf-8") as f:
        return [line.strip().strip("/") for line in f if line.strip().endswith("/")]


ignored = ignored_folders()
tops = sorted(
    e
    for e in os.listdir(root)
    if os.path.isdir(os.path.join(root, e)) and e != ".git" and not any(fnmatch.fnmatch(e, g) for g in ignored)
)
# A path: a top-level folder, then path characters; stops at a space, a colon
# (file:line), a comma or a closing backquote.
path_re = re.compile(r"`((?:%s)/[A-Za-z0-9_.*{},/+-]*)" % "|".join(re.escape(t) for t in tops))

docs = [os.path.join(root, "README.md")]
docs += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
docs += sorted(glob.glob(os.path.join(root, "src", "**", "README.md"), recursive=True))


def expand(p):
    """`a.{hpp,cpp}` -> a.hpp, a.cpp; anything else as it is."""
    m = re.search(r"\{([^}]*)\}", p)
    if not m:
        return [p]
    return [x for alt in m.group(1).split(",") for x in expand(p[: m.start()] + alt + p[m.end() :])]


def exists(p):
    """A glob that matches something; a path written without its extension
    (`kernels/ops/convert`) matches its files; an all-capitals part (`corpus/NAME`)
    stands for any name."""
    p = "/".join("*" if re.fullmatch(r"[A-Z][A-Z0-9_]*", part) else part for part in p.split("/"))
    return bool(glob.glob(os.path.join(root, p)) or glob.glob(os.path.join(root, p + ".*")))


missing = 0
for doc in docs:
    with open(doc, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for p in path_re.findall(line):
                p = p.rstrip(".,")
                for q in expand(p):
                    if not exists(q):
                        print(f"{os.path.relpath(doc, root)}:{n}: {q} does not exist")
                        missing += 1
print(f"docs_paths: {len(docs)} documents, {missing} missing path(s)")
sys.exit(1 if missing else 0)
