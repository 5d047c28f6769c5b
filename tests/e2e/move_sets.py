#!/usr/bin/env python3
"""move_sets.py BUILD_DIR IN.clrr OUT.clrr — writes IN with the BEGIN and
END records of every clSetUserEventStatus moved to just after the END of
the next blocking call (clWaitForEvents, clFinish, or an enqueue whose
blocking flag is set): the order a recording holds when a second thread
set the event, and the wait it released wrote its END first. Prints the
number of calls moved. Uses the trace codec of tests/corrupt/make.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corrupt"))
import make  # noqa: E402

SIG, BEGIN, END = 1, 2, 3


def main():
    build, src, dst = sys.argv[1:4]
    out_dir = os.path.dirname(os.path.abspath(dst))
    S = make.Sections(build, src, out_dir)
    sigs, fn_of = {}, {}
    for r in S.all_records():
        if isinstance(r, list) and r and r[0] == SIG:
            sigs[r[1]] = (r[2], [p[0] for p in r[4]])
    for r in S.all_records():
        if isinstance(r, list) and r and r[0] == BEGIN:
            fn_of[r[1]] = (r[3], r[5])

    def blocking(seq):
        name, params = sigs[fn_of[seq][0]]
        if name in ("clWaitForEvents", "clFinish"):
            return True
        args = fn_of[seq][1]
        return any(p.startswith("blocking") and args[i] for i, p in enumerate(params) if i < len(args))

    # (section, position) of every record, in file order
    secs = [(t, make.records(b) if t == b"R" else b) for t, b in S.secs]
    order = [(k, i) for k, (t, body) in enumerate(secs) if t == b"R" for i in range(len(body))]
    moving, held, after = set(), {}, {}
    for k, i in order:
        r = secs[k][1][i]
        if not (isinstance(r, list) and r and r[0] in (BEGIN, END)):
            continue
        seq = r[1]
        if r[0] == BEGIN and sigs[fn_of[seq][0]][0] == "clSetUserEventStatus":
            moving.add(seq)
        if seq in moving:
            held.setdefault(seq, []).append(r)
            secs[k][1][i] = None
        elif r[0] == END and blocking(seq):
            for m in sorted(held):
                if len(held[m]) == 2:   # both records seen: goes after this END
                    after.setdefault((k, i), []).extend(held.pop(m))
    if held:
        sys.exit("move_sets.py: no blocking call after clSetUserEventStatus #%s" % sorted(held))
    out = []
    for k, (t, body) in enumerate(secs):
        if t != b"R":
            out.append((t, body))
            continue
        recs = []
        for i, r in enumerate(body):
            if r is not None:
                recs.append(r)
            recs.extend(after.get((k, i), []))
        out.append((t, b"".join(make.pack(r) for r in recs)))
    S.write(os.path.basename(dst), out)
    print(len(moving))


main()
