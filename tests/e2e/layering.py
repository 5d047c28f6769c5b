#!/usr/bin/env python3
"""Checks clrr's layering against the table of docs/ARCHITECTURE.md (the one
place the layer order is written; see "Layers").

  layering.py includes ROOT       every `#include "module/..."` line of ROOT's
                                  sources: a module includes headers of itself
                                  and of the modules its row lists, never an
                                  *_int.h of another module (tests/ excepted:
                                  unit tests test internals)
  layering.py links ROOT BUILD    every object of BUILD/obj: a symbol it needs
                                  that a project object defines is defined by
                                  its own module or one its row lists
  layering.py table ROOT          the table alone: every module exists, lists
                                  only modules above it in the table, and names
                                  a public header that exists

--table FILE (first): the table of FILE instead of ROOT/docs/ARCHITECTURE.md
(the test's own checks that a violation is found). Prints one line per
violation and exits 1 when there is any, else 0.
"""
import os
import re
import subprocess
import sys

BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"
# headers generated into build/gen, by owning module; True: public
# (api_sem.h, the call semantics, sits with trace-format: libtf.a archives it)
GENERATED = {"rec_gen.h": ("recorder", True), "rpl_gen.h": ("replayer", False), "api_sem.h": ("trace-format", True)}
# generated objects of build/obj/gen, by owning module
GEN_OBJS = {"api_sem": "trace-format", "rec_gen": "recorder", "rpl_gen": "replayer", "rpl_gen_api": "replayer", "cl_names": "tools"}
SOURCE_EXT = (".c", ".h", ".cc", ".cpp")


def read_table(root, table=None):
    """[(module, header or None, set of allowed modules or '*')] bottom first."""
    text = open(table or os.path.join(root, "docs", "ARCHITECTURE.md")).read()
    if BEGIN not in text or END not in text:
        sys.exit("layering: docs/ARCHITECTURE.md has no %s ... %s table" % (BEGIN, END))
    rows = []
    for line in text.split(BEGIN, 1)[1].split(END, 1)[0].splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("module", "") or set(cells[0]) <= set("-: "):
            continue
        mod, header, uses = cells[0], cells[1], cells[2]
        header = None if header in ("—", "-", "") else header
        if uses.startswith("*"):
            allowed = "*"
        else:
            allowed = set(u.strip().strip("`") for u in uses.split(",") if u.strip() not in ("—", "-", ""))
        rows.append((mod, header, allowed))
    if not rows:
        sys.exit("layering: the table of docs/ARCHITECTURE.md is empty")
    return rows


def check_table(root, rows):
    errs, seen = [], []
    for mod, header, allowed in rows:
        if not os.path.isdir(os.path.join(root, mod)):
            errs.append("table: module %s has no folder" % mod)
        if header and not os.path.isfile(os.path.join(root, header)):
            errs.append("table: %s's public header %s does not exist" % (mod, header))
        if allowed != "*":
            for u in sorted(allowed):
                if u not in seen:
                    errs.append("table: %s may use %s, which is not above it in the table" % (mod, u))
        seen.append(mod)
    return errs


def sources(root, mod):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, mod)):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in sorted(filenames):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(dirpath, f)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check_includes(root, rows):
    mods = {m: (h, a) for m, h, a in rows}
    errs = []
    for mod, _, allowed in rows:
        for path in sources(root, mod):
            rel = os.path.relpath(path, root)
            for n, line in enumerate(open(path, errors="replace"), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if "/" in inc:
                    target, public = inc.split("/", 1)[0], not inc.endswith("_int.h")
                elif inc in GENERATED:
                    target, public = GENERATED[inc]
                else:
                    continue   # a header beside the file (or not the project's)
                if target not in mods or target == mod:
                    continue
                where = "%s:%d: %s includes %s" % (rel, n, mod, inc)
                if allowed != "*" and target not in allowed:
                    errs.append("%s: %s may not use %s (docs/ARCHITECTURE.md, Layers)" % (where, mod, target))
                elif not public and mod != "tests":
                    errs.append("%s: an internal header of %s" % (where, target))
    return errs


def nm(objs, defined):
    """{object: [symbols]}: the global symbols each of @objs defines (or needs)."""
    res = {o: [] for o in objs}
    objs = sorted(objs)
    for i in range(0, len(objs), 200):
        args = ["nm", "-g", "-A", "--defined-only" if defined else "--undefined-only"] + objs[i:i + 200]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, _, rest = line.partition(": ")
            if not rest.strip():
                name, _, rest = line.partition(":")
            if name in res and rest.split():
                res[name].append(rest.split()[-1])
    return res


def check_links(root, build, rows):
    mods = {m: a for m, _, a in rows}
    objdir = os.path.join(build, "obj")
    owner_of_obj = {}
    for dirpath, _, filenames in os.walk(objdir):
        for f in filenames:
            if not f.endswith(".o"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), objdir)
            top = rel.split(os.sep, 1)[0]
            mod = GEN_OBJS.get(f[:-2]) if top == "gen" else top
            # only objects of sources that exist (a build folder keeps the
            # objects of files since moved)
            if top != "gen" and not any(os.path.isfile(os.path.join(root, rel[:-2] + e)) for e in SOURCE_EXT):
                continue
            if mod in mods:
                owner_of_obj[os.path.join(dirpath, f)] = mod
    if not owner_of_obj:
        return ["links: no objects under %s (build first)" % objdir]
    definer = {}   # symbol -> set of modules
    for obj, syms in nm(list(owner_of_obj), True).items():
        for s in syms:
            definer.setdefault(s, set()).add(owner_of_obj[obj])
    errs = []
    needs = nm([o for o, m in owner_of_obj.items() if mods[m] != "*"], False)
    for obj, mod in sorted(owner_of_obj.items()):
        allowed = mods[mod]
        if allowed == "*":
            continue
        for s in needs[obj]:
            by = definer.get(s)
            if not by or mod in by or by & allowed:
                continue
            errs.append("%s: %s needs %s, defined by %s (docs/ARCHITECTURE.md, Layers)"
                        % (os.path.relpath(obj, build), mod, s, ", ".join(sorted(by))))
    return errs


def main(argv):
    table = None
    if len(argv) > 2 and argv[1] == "--table":
        table = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] not in ("includes", "links", "table"):
        sys.exit(__doc__)
    root = argv[2]
    rows = read_table(root, table)
    errs = check_table(root, rows)
    if argv[1] == "includes":
        errs += check_includes(root, rows)
    elif argv[1] == "links":
        if len(argv) < 4:
            sys.exit(__doc__)
        errs += check_links(root, argv[3], rows)
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
