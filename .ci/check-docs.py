#!/usr/bin/env python3
"""Checks that the docs still say true things about the code (issue 40). Python 3, stdlib only.

Run from anywhere: `python3 .ci/check-docs.py`. Exits 0 when all is well, 1 with one line per
problem otherwise. Three checks:

1. Paths. In README.md and docs/*.md, outside fenced code blocks, every piece of inline code
   (`...`) is split on white space; a word is a *path* when
     - it contains a `/` and ends in .rs .sh .md .sql .toml .js .ts .mjs .py, or
     - it ends in `/` and starts with app/ server/ widget/ embed/ docs/ migrations/ end2end/
       style/ .ci/ (a directory of the repository),
   and it holds no `://`, `{`, `<`, `*`, `…` and does not start with `/` (URLs, routes and
   templates are not files). A path must exist (file or directory, in the working tree) under
   one of the BASES below: the repository root, or a directory the docs abbreviate from
   (`store/agents.rs` is app/engine/src/store/agents.rs, `routes/chat.rs` is
   server/src/routes/chat.rs, `it/abuse.rs` is server/tests/it/abuse.rs, ...).
   A bare file name without `/` (`hub.rs`) is also checked, more weakly: some file of that name
   must exist somewhere in the repository (SKIP_DIRS, e.g. target/ and node_modules/, aside).
   Paths outside the repository (`../shared/...`) and the names in IGNORE are skipped.

2. The table map. docs/architecture.md holds a table between `<!-- tables:begin -->` and
   `<!-- tables:end -->`; the first cell of each row is one table name in backticks. Every
   `CREATE TABLE name` of docs/schema.sql must have exactly one row, and every row must name a
   table of docs/schema.sql.

3. The layering rule. docs/architecture.md lists, between `<!-- layering:begin -->` and
   `<!-- layering:end -->`, the files that break "the store imports nothing from the engine" or
   "the engine imports nothing from the console": one list item per file, whose first words are
   the file's path in backticks relative to app/engine/src/, e.g. - `store/hours.rs` reads ...
   (later paths in the item are explanation and are not read). A file under
   app/engine/src/store/ that names the engine (`crate::engine`, `crate::{... engine ...}`, or
   `engine` after `super::`; the store has no module of that name) must be on that list, and
   every file on the list must still do so (a mended file is taken off the list). Lines starting
   with `//` are not read. (The engine cannot import the console: they are separate crates. The
   Rust test app/engine/src/layers.rs checks the same rule, and import cycles, on the code.)

What it does not do: it proves a path exists, not that it is the file the sentence means; an
abbreviated path passes if it exists under any of the BASES.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where a path is looked up (relative to the repository root); it must exist under one of them.
BASES = [
    "",
    "app/engine/src/",
    "app/engine/src/engine/",
    "app/src/server/",
    "app/src/",
    "server/src/",
    "server/tests/",
    "server/tests/it/",
    "widget/src/",
    "end2end/",
]

# Words that look like paths but are not files of this repository (none today; paths outside
# it, ../shared/..., are skipped anyway). Add one only with the reason beside it.
IGNORE = set()

EXTENSIONS = (".rs", ".sh", ".md", ".sql", ".toml", ".js", ".ts", ".mjs", ".py")
DIR_ROOTS = ("app/", "server/", "widget/", "embed/", "docs/", "migrations/", "end2end/", "style/", ".ci/")
SKIP_DIRS = {".git", "target", "node_modules", "data", ".tools", "test-results", "playwright-report"}

ARCH = "docs/architecture.md"
SCHEMA = "docs/schema.sql"


def rel(path):
    return os.path.relpath(path, ROOT)


def doc_files():
    files = ["README.md"]
    docs = os.path.join(ROOT, "docs")
    files += sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md"))
    return files


def all_file_names():
    names = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        names.update(filenames)
    return names


def inline_code(text):
    """(line number, code) for every inline code span outside fenced code blocks."""
    out = []
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in re.finditer(r"`([^`]+)`", line):
            out.append((n, m.group(1)))
    return out


def looks_like_path(word):
    if word.startswith(("/", "../", "~")) or any(s in word for s in ("://", "{", "<", "*", "…")):
        return False
    if "/" in word and word.endswith(EXTENSIONS):
        return True
    return word.endswith("/") and word.startswith(DIR_ROOTS)


def looks_like_file_name(word):
    return "/" not in word and word.endswith(EXTENSIONS) and re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*", word) is not None


def exists(word):
    return any(os.path.exists(os.path.join(ROOT, base, word)) for base in BASES)


def check_paths(problems):
    names = all_file_names()
    for doc in doc_files():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        for n, code in inline_code(text):
            for word in code.split():
                word = word.rstrip(",;:)")
                if word in IGNORE:
                    continue
                if looks_like_path(word):
                    if not exists(word):
                        problems.append(f"{doc}:{n}: `{word}` does not exist (tried under: "
                                        + ", ".join(b or "./" for b in BASES) + ")")
                elif looks_like_file_name(word) and word not in names:
                    problems.append(f"{doc}:{n}: `{word}`: no file of that name in the repository")


def between(text, name):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        return None
    return text[text.index(begin) + len(begin):text.index(end)]


def check_tables(problems):
    with open(os.path.join(ROOT, SCHEMA), encoding="utf-8") as f:
        tables = re.findall(r"^CREATE TABLE\s+\"?(\w+)", f.read(), re.M)
    with open(os.path.join(ROOT, ARCH), encoding="utf-8") as f:
        block = between(f.read(), "tables")
    if block is None:
        problems.append(f"{ARCH}: no table map between <!-- tables:begin --> and <!-- tables:end -->")
        return
    mapped = []
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.strip().startswith("|") or not cells or set(cells[0]) <= set("-: "):
            continue
        m = re.fullmatch(r"`(\w+)`", cells[0])
        if m:
            mapped.append(m.group(1))
        elif cells[0] != "table":
            problems.append(f"{ARCH}: table map row does not start with one `table`: {line.strip()}")
    for t in sorted(set(tables) - set(mapped)):
        problems.append(f"{ARCH}: table `{t}` of {SCHEMA} is missing from the table map")
    for t in sorted(set(mapped) - set(tables)):
        problems.append(f"{ARCH}: the table map names `{t}`, which is not in {SCHEMA}")
    for t in sorted({t for t in mapped if mapped.count(t) > 1}):
        problems.append(f"{ARCH}: the table map names `{t}` more than once")


STORE_TO_ENGINE = re.compile(r"\b(?:crate::|(?:super::)+)(?:engine\b|\{[^}]*\bengine\b)")


def importers(directory, pattern):
    found = set()
    top = os.path.join(ROOT, directory)
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                code = "\n".join(l for l in f.read().splitlines() if not l.lstrip().startswith("//"))
            if pattern.search(code):
                found.add(rel(path).replace(os.sep, "/"))
    return found


def check_layering(problems):
    with open(os.path.join(ROOT, ARCH), encoding="utf-8") as f:
        block = between(f.read(), "layering")
    if block is None:
        problems.append(f"{ARCH}: no layering rule between <!-- layering:begin --> and <!-- layering:end -->")
        return
    listed = {"app/engine/src/" + p
              for p in re.findall(r"^\s*- `((?:store|engine)/[\w/]+\.rs)`", block, re.M)}
    actual = importers("app/engine/src/store", STORE_TO_ENGINE)
    for p in sorted(actual - listed):
        problems.append(f"{p} imports the engine, breaking the layering rule of {ARCH}; "
                        f"import it the other way round, or list the file as an exception there")
    for p in sorted(listed - actual):
        problems.append(f"{ARCH}: `{p[len('app/engine/src/'):]}` is listed as a layering exception "
                        f"but imports no longer cross the layer: take it off the list")


def main():
    problems = []
    check_paths(problems)
    check_tables(problems)
    check_layering(problems)
    if problems:
        print(f"check-docs: {len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print("check-docs: OK (paths in README.md and docs/*.md exist; the table map of "
          f"{ARCH} covers {SCHEMA}; the layering exceptions match the code)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
