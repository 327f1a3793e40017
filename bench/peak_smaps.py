#!/usr/bin/python3
"""Where a command's peak resident memory goes: runs CMD, reads /proc/PID/smaps every ~2 ms,
and prints VmHWM, then the sample with the largest total Rss by mapping name (the model file,
each library, [heap], [anon]; '(x)' marks executable mappings: code, oneDNN's JIT) and its
largest single mappings.

    /usr/bin/python3 bench/peak_smaps.py build/tools/omopt run MODEL --input-dir DIR ...

A sample can miss a peak shorter than the interval (VmHWM does not); the two agree within a few
MiB on the decoders of bench/gen_decoder.py (bench/README.md, "Peak memory")."""
import collections
import os
import subprocess
import sys
import time


def sample(pid):
    """{(name, range): Rss KiB} of every mapping of pid"""
    out, key = {}, None
    with open('/proc/%d/smaps' % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and '-' in parts[0] and not parts[0].endswith(':'):
                name = parts[5] if len(parts) >= 6 else '[anon]'
                key = (name + (' (x)' if 'x' in parts[1] else ''), parts[0])
            elif parts and parts[0] == 'Rss:' and key:
                out[key] = int(parts[1])
    return out


def hwm(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    return 0


def main(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    best, best_total, peak = {}, 0, 0
    while p.poll() is None:
        try:
            maps = sample(p.pid)
            peak = max(peak, hwm(p.pid))
        except (OSError, ValueError):
            break
        total = sum(maps.values())
        if total > best_total:
            best, best_total = maps, total
        time.sleep(0.002)
    rc = p.wait()
    print('VmHWM %.1f MiB, sampled peak %.1f MiB%s' % (peak / 1024, best_total / 1024,
                                                         '' if rc == 0 else ', exit %d' % rc))
    groups = collections.Counter()
    for (name, _), kib in best.items():
        groups[os.path.basename(name) if name.startswith('/') else name] += kib
    for name, kib in groups.most_common():
        if kib >= 256:
            print('%8.1f MiB  %s' % (kib / 1024, name))
    print('largest mappings:')
    for (name, rng), kib in sorted(best.items(), key=lambda kv: -kv[1])[:12]:
        lo, hi = (int(x, 16) for x in rng.split('-'))
        print('%8.1f MiB of %8.1f  %s' % (kib / 1024, (hi - lo) / 2**20, name))
    return rc


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
