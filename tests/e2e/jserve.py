# tests/e2e/jserve.py REQ ANS PID — answers lib.sh's j() for one e2e script.
# A python3 start costs 30 ms of CPU on the 2-core VM, and the scripts
# ask hundreds of questions of JSON files: one process answers them all.
# Each request on the FIFO REQ is "FILE\0EXPR"; the answer on the FIFO ANS
# is "STATUS\n" then what `print(EXPR)` prints, d being FILE's JSON (STATUS
# 0), or the error (STATUS 1). Ends when the script (PID) has ended or its
# folder is gone.
import json
import os
import sys
import threading
import time
import traceback


def watch(pid, folder):
    while True:
        try:
            os.kill(pid, 0)
        except OSError:
            os._exit(0)
        if not os.path.isdir(folder):
            os._exit(0)
        time.sleep(0.2)


def answer(req):
    path, _, expr = req.partition("\0")
    try:
        with open(path) as f:
            d = json.load(f)
        return "0\n" + str(eval(expr, {"d": d, "json": json, "sys": sys})) + "\n"
    except Exception:   # the question's own error, told to the script
        return "1\nj: " + "".join(traceback.format_exception_only(*sys.exc_info()[:2]))


def main():
    req_path, ans_path, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.closerange(3, 1024)   # no pipe of the script stays open here
    threading.Thread(target=watch, args=(pid, os.path.dirname(req_path)), daemon=True).start()
    while True:
        with open(req_path) as f:
            req = f.read()
        with open(ans_path, "w") as f:
            f.write(answer(req))


main()
