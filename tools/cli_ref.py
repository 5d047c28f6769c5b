#!/usr/bin/env python3
"""cli_ref.py — manual pages and bash completion for `clrr`, made from what
the built `clrr` prints (its usage strings, tools/clrr/cmd_*.c), like
tools/cli_docs.sh makes docs/commands.md: one source of truth.

  cli_ref.py man CLRR OUTDIR [ENVIRONMENT.md]
      writes OUTDIR/clrr.1 (the commands, the exit statuses, and an
      ENVIRONMENT section made from the tables of docs/environment.md) and
      OUTDIR/clrr-COMMAND.1 for each command of `clrr --help`.
  cli_ref.py completion CLRR OUT
      writes a bash completion script (function _clrr): the commands after
      `clrr` and `clrr help`, each command's options after it, file names
      otherwise.
  cli_ref.py options CLRR COMMAND
      prints the options COMMAND's usage string lists, one a line (what the
      man page and the completion offer; tests/e2e/cli_man.sh uses it).

The generated files go to the build folder (`make` runs this); they are
not committed. Exit status: 0, 1 when CLRR prints something unexpected,
2 usage error.
"""
import os
import re
import subprocess
import sys

OPT_LINE = re.compile(r"^  (-\S.*)$")          # "  --json   one JSON object"
CONT_LINE = re.compile(r"^   +\S")              # deeper: the description goes on
OPT_NAME = re.compile(r"(?<![\w-])(--?[A-Za-z][-A-Za-z0-9]*)")


def run_clrr(clrr, *args):
    env = dict(os.environ, LC_ALL="C")
    for k in ("CLRR_COSTS", "CLRR_MAX_MEMORY", "CLRR_DEBUG"):
        env.pop(k, None)
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    r = subprocess.run([clrr] + list(args), stdout=subprocess.PIPE, env=env, check=True)
    return r.stdout.decode("utf-8", "replace")


def commands(top):
    """[(name, synopsis)] of the Commands: block of `clrr --help`."""
    out, inside = [], False
    for line in top.splitlines():
        if line.startswith("Commands:"):
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            m = re.match(r"^  (\S+)\s+(.*)$", line)
            if m:
                out.append((m.group(1), m.group(2)))
    if not out:
        sys.exit("cli_ref.py: 'clrr --help' lists no commands")
    return out


def split_term(line, col):
    """An option line into (term, description): at the first run of two
    spaces, else at the block's description column @col."""
    body = line[2:]
    m = re.search(r"\S(  +)(\S)", body)
    if m:
        return body[:m.start(1)].strip(), body[m.start(2):].strip()
    if col and len(line) > col and line[col - 1] == " " and line[col] != " ":
        return line[:col].strip(), line[col:].strip()
    return body.strip(), ""


def parse(text):
    """Usage text into blocks: ("usage", [lines]), ("para", [lines]),
    ("head", line), ("opts", [(term, [desc lines])]), ("pre", [lines])."""
    lines = text.rstrip("\n").split("\n")
    blocks = []
    i = 0
    usage = []
    while i < len(lines) and (lines[i].startswith("Usage: ") or (usage and lines[i].startswith("       "))):
        usage.append(lines[i][7:].strip() if lines[i].startswith("Usage: ") else lines[i].strip())
        i += 1
    blocks.append(("usage", usage))
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if OPT_LINE.match(line):
            j = i
            group = []
            while j < len(lines) and (OPT_LINE.match(lines[j]) or (group and CONT_LINE.match(lines[j]))):
                if OPT_LINE.match(lines[j]):
                    group.append([lines[j], []])
                else:
                    group[-1][1].append(lines[j].strip())
                j += 1
            # the description column: where continuation lines start, or where
            # two-space splits put descriptions
            cols = {}
            for l, _ in group:
                m = re.search(r"\S(  +)(\S)", l[2:])
                if m:
                    c = 2 + m.start(2)
                    cols[c] = cols.get(c, 0) + 1
            col = max(cols, key=cols.get) if cols else 0
            entries = []
            for l, cont in group:
                term, desc = split_term(l, col)
                entries.append((term, ([desc] if desc else []) + cont))
            blocks.append(("opts", entries))
            i = j
            continue
        if line.startswith(" "):
            j = i
            pre = []
            while j < len(lines) and lines[j].startswith(" ") and not OPT_LINE.match(lines[j]):
                pre.append(lines[j])
                j += 1
            blocks.append(("pre", pre))
            i = j
            continue
        # a paragraph: lines at column 0 up to a blank or indented line
        j = i
        para = []
        while j < len(lines) and lines[j].strip() and not lines[j].startswith(" "):
            if para and lines[j].startswith("Exit status"):
                break       # the exit statuses start a section of their own
            para.append(lines[j])
            j += 1
        before_opts = j < len(lines) and OPT_LINE.match(lines[j])
        if len(para) == 1 and para[0].endswith(":") and j < len(lines) and lines[j].startswith(" "):
            blocks.append(("head", para[0][:-1]))
        elif para[-1].endswith(":") and before_opts and not any(b[0] == "opts" for b in blocks):
            blocks.append(("head", "Options"))     # "Recorder options (...):" and its list
            blocks.append(("para", para))
        else:
            blocks.append(("para", para))
        i = j
    return blocks


def options_of(text):
    """Every option name (-x, --long) the usage text's option lists name."""
    seen = []
    for kind, val in parse(text):
        if kind != "opts":
            continue
        for term, _ in val:
            for name in OPT_NAME.findall(term):
                if name not in seen:
                    seen.append(name)
    return seen


def esc(s):
    """Text for roff: backslashes, minus signs, and no control line."""
    s = s.replace("\\", "\\e").replace("-", "\\-")
    s = "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in s)
    if s[:1] in (".", "'"):
        s = "\\&" + s
    return s


def bold_opts(s):
    """A term with its option names in bold, the rest (values) in italics."""
    out, pos = [], 0
    for m in OPT_NAME.finditer(s):
        if m.start() > pos:
            out.append("\\fI" + esc(s[pos:m.start()]) + "\\fR")
        out.append("\\fB" + esc(m.group(1)) + "\\fR")
        pos = m.end()
    if pos < len(s):
        out.append("\\fI" + esc(s[pos:]) + "\\fR")
    return "".join(out)


def roff_body(blocks, section_names):
    """The blocks after the usage as roff; a heading block, or a paragraph
    starting "Exit status", starts a section."""
    out = []
    in_section = False
    for kind, val in blocks[1:]:
        if kind == "head" and val.startswith("Exit status"):
            out.append(".SH \"EXIT STATUS\"")
            if " (" in val:
                out.append(esc(val[val.index(" (") + 2:].rstrip(")")) + ".")
            in_section = True
        elif kind == "head":
            name = val.upper()
            if name.startswith("OPTIONS") or "OPTIONS" in name.split(" (")[0]:
                head = name.split(" (")[0]
                out.append(".SH " + esc(head if head in ("OPTIONS",) else head))
                if " (" in val:
                    out.append(esc(val[val.index(" (") + 2:].rstrip(")")) + ".")
            else:
                out.append(".SS " + esc(val))
            in_section = True
        elif kind == "para":
            first = val[0]
            if first.startswith("Exit status"):
                out.append(".SH \"EXIT STATUS\"")
                rest = re.sub(r"^Exit status[^:]*:\s*", "", " ".join(val))
                if rest:
                    out.append(esc(rest))
                in_section = True
                continue
            if not in_section and "DESCRIPTION" not in section_names:
                out.append(".SH DESCRIPTION")
                section_names.add("DESCRIPTION")
            out.append(".PP")
            out.extend(esc(l) for l in val)
        elif kind == "pre":
            out.append(".PP")
            out.append(".nf")
            out.extend(esc(l) for l in val)
            out.append(".fi")
        elif kind == "opts":
            for term, desc in val:
                out.append(".TP")
                out.append(bold_opts(term))
                for k, l in enumerate(desc):
                    if k and l.startswith("default:"):   # record's "default: X; sets CLRR_X"
                        out.append(".br")
                    out.append(esc(l))
    return out


def th(name, version):
    return ['.\\" generated by tools/cli_ref.py from the usage strings of clrr '
            '(tools/clrr/cmd_*.c) \\(em do not edit',
            '.TH %s 1 "" "clrr %s" "clrr manual"' % (esc(name.upper()), esc(version))]


def environment(envmd):
    """ENVIRONMENT entries from the tables of docs/environment.md: every row
    whose first cell is a `CLRR_*` variable."""
    rows = []
    if not envmd or not os.path.exists(envmd):
        return rows
    header = []
    for line in open(envmd, encoding="utf-8"):
        h = re.match(r"^\|\s*variable\s*\|(.*)\|\s*$", line)
        if h:    # the table's column names, said before each cell but "meaning"
            header = [c.strip().replace("`", "") for c in h.group(1).split("|")]
            continue
        m = re.match(r"^\|\s*`(CLRR_[A-Z0-9_]+)`\s*\|(.*)\|\s*$", line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(2).split("|")]
        parts = []
        for k, c in enumerate(cells):
            if not c or c == "—":
                continue
            name = header[k] if k < len(header) else "meaning"
            parts.append(c if name == "meaning" else "%s: %s" % (name, c))
        text = "; ".join(parts)
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "")
        rows.append((m.group(1), text))
    return rows


def man(clrr, outdir, envmd):
    os.makedirs(outdir, exist_ok=True)
    top = run_clrr(clrr, "--help")
    version = run_clrr(clrr, "--version").split()[-1]
    cmds = commands(top)
    # clrr.1
    blocks = parse(top)
    lines = th("clrr", version)
    lines += [".SH NAME", "clrr \\- " + esc(blocks[1][1][0] if blocks[1][0] == "para" else "OpenCL record and replay")]
    lines += [".SH SYNOPSIS", ".B clrr", ".I COMMAND", "[\\fIOPTIONS\\fR] [\\fIARGS\\fR]"]
    lines += [".SH COMMANDS"]
    for name, syn in cmds:
        lines += [".TP", "\\fBclrr\\-%s\\fR(1)" % esc(name), esc(syn)]
    rest = [b for b in blocks[1:] if not (b[0] == "head" and b[1] == "Commands")]
    rest = [b for b in rest if not (b[0] == "pre" and any(l.startswith("  %s " % cmds[0][0]) for l in b[1]))]
    if rest and rest[0][0] == "para":
        rest = rest[1:]     # the one-line description is the NAME
    lines += roff_body([("usage", [])] + rest, {"DESCRIPTION"})
    env = environment(envmd)
    if env:
        lines += [".SH ENVIRONMENT"]
        for var, text in env:
            lines += [".TP", "\\fB%s\\fR" % esc(var), esc(text)]
    lines += [".SH \"SEE ALSO\"", ", ".join("\\fBclrr\\-%s\\fR(1)" % esc(n) for n, _ in cmds)]
    write(os.path.join(outdir, "clrr.1"), lines)
    for name, syn in cmds:
        text = run_clrr(clrr, "help", name)
        blocks = parse(text)
        lines = th("clrr-" + name, version)
        lines += [".SH NAME", "clrr\\-%s \\- %s" % (esc(name), esc(syn)), ".SH SYNOPSIS", ".nf"]
        lines += ["\\fBclrr %s\\fR%s" % (esc(name), esc(u[len("clrr " + name):]))
                  if u.startswith("clrr " + name) else esc(u) for u in blocks[0][1]]
        lines += [".fi"]
        lines += roff_body(blocks, set())
        lines += [".SH \"SEE ALSO\"", "\\fBclrr\\fR(1)"]
        write(os.path.join(outdir, "clrr-%s.1" % name), lines)


def completion(clrr, out):
    top = run_clrr(clrr, "--help")
    cmds = commands(top)
    names = " ".join(n for n, _ in cmds)
    lines = ["# bash completion for clrr -- generated by tools/cli_ref.py from the",
             "# usage strings of clrr (tools/clrr/cmd_*.c); do not edit.",
             "_clrr() {",
             "    local cur=${COMP_WORDS[COMP_CWORD]} i",
             "    COMPREPLY=()",
             "    # after '--' (record, run): the command and its arguments",
             "    for ((i = 2; i < COMP_CWORD; i++)); do",
             "        if [[ ${COMP_WORDS[i]} == -- ]]; then",
             "            if ((i + 1 == COMP_CWORD)); then",
             "                COMPREPLY=($(compgen -c -- \"$cur\"))",
             "            else",
             "                COMPREPLY=($(compgen -f -- \"$cur\"))",
             "            fi",
             "            return 0",
             "        fi",
             "    done",
             "    if ((COMP_CWORD == 1)); then",
             "        COMPREPLY=($(compgen -W \"%s help --help --version\" -- \"$cur\"))" % names,
             "        return 0",
             "    fi",
             "    local opts=",
             "    case ${COMP_WORDS[1]} in",
             "    help) ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return 0 ;;" % names]
    for name, _ in cmds:
        opts = options_of(run_clrr(clrr, "help", name))
        if "--help" not in opts:
            opts.append("--help")
        lines.append("    %s) opts=\"%s\" ;;" % (name, " ".join(opts)))
    lines += ["    *) return 0 ;;",
              "    esac",
              "    if [[ $cur == -* ]]; then",
              "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))",
              "    else",
              "        COMPREPLY=($(compgen -f -- \"$cur\"))",
              "    fi",
              "    return 0",
              "}",
              "complete -o filenames -F _clrr clrr"]
    write(out, lines)


def write(path, lines):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def main(argv):
    if len(argv) >= 4 and argv[1] == "man":
        man(argv[2], argv[3], argv[4] if len(argv) > 4 else None)
    elif len(argv) == 4 and argv[1] == "completion":
        completion(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "options":
        print("\n".join(options_of(run_clrr(argv[2], "help", argv[3]))))
    else:
        sys.stderr.write("usage: cli_ref.py man CLRR OUTDIR [ENV.md] | completion CLRR OUT | options CLRR CMD\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
