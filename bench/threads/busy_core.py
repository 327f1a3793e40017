#!/usr/bin/python3
"""bench/threads/busy_core.py — the busy-core case of issue 33: bench/compare_ort.py (omopt
against ONNX Runtime, interleaved) while BUSY other processes each hold a core with a Python
busy loop (unpinned: the scheduler places them, as a user's other work). Arguments after `--`
go to compare_ort.py unchanged; the loops are stopped (by their pid) when it ends.

    python3 bench/threads/busy_core.py [--busy 1] -- --threads 1,2 --rounds 3 MODEL...

Report the busy run beside the idle one (--busy 0): at 2 threads with a busy core omopt must
not be slower than omopt at 1 thread, and the CPU column shows workers that spin."""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--busy', type=int, default=1, help='busy-loop processes (default 1)')
    ap.add_argument('rest', nargs=argparse.REMAINDER, help='-- compare_ort.py arguments')
    a = ap.parse_args()
    rest = a.rest[1:] if a.rest[:1] == ['--'] else a.rest
    loops = [subprocess.Popen([sys.executable, '-c', 'while 1: pass'])
             for _ in range(a.busy)]
    try:
        cmd = [sys.executable, os.path.join(HERE, '..', 'compare_ort.py')] + rest
        print('# %d busy-loop process(es): %s' % (a.busy, ' '.join(str(p.pid) for p in loops)),
              flush=True)
        return subprocess.call(cmd)
    finally:
        for p in loops:
            p.kill()
            p.wait()


if __name__ == '__main__':
    sys.exit(main())
