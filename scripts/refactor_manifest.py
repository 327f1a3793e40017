#!/usr/bin/env python3
"""A manifest of what one omopt binary makes of a set of models, to prove a refactor changes
nothing: the SHA-256 of every output file and exit status of `run --exact`, `run` (fast mode at
one and two threads), `run --save-optimized` and `simplify`, on the ONNX node tests and the
shared real models. Two manifests (before and after) are compared with --compare.

  usage: refactor_manifest.py OMOPT OUT.json [--shared DIR] [--jobs N] [--node-limit N]
         refactor_manifest.py --compare BEFORE.json AFTER.json

Exit status of --compare: 0 when every entry is the same, 1 otherwise (each difference listed).
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import subprocess
import sys
import tempfile


def digest_dir(path):
    h = hashlib.sha256()
    for name in sorted(os.listdir(path)):
        h.update(name.encode())
        with open(os.path.join(path, name), 'rb') as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def digest_file(path):
    if not os.path.exists(path):
        return 'missing'
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def run(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        return p.returncode, p.stderr.decode(errors='replace').strip().splitlines()[-1:] \
            if p.returncode else []
    except subprocess.TimeoutExpired:
        return 'timeout', []


def case(omopt, model, inputs, modes):
    """One model: each mode's exit status, stderr's last line on failure and outputs' digest."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            d = os.path.join(tmp, mode)
            if mode == 'simplify':
                f = os.path.join(tmp, 'simplified.onnx')
                rc, err = run([omopt, 'simplify', model, f])
                out[mode] = [rc, err, digest_file(f)]
                continue
            cmd = [omopt, 'run', model, '--output-dir', d] + inputs
            if mode == 'exact':
                cmd.append('--exact')
            elif mode == 'fast2':
                cmd += ['--threads', '2']
            elif mode == 'optimized':
                f = os.path.join(tmp, 'optimized.onnx')
                cmd += ['--save-optimized', f]
            rc, err = run(cmd)
            if mode == 'optimized':
                out[mode] = [rc, err, digest_file(f)]
            else:
                out[mode] = [rc, err, digest_dir(d) if os.path.isdir(d) else 'none']
    return out


def cases(shared, node_limit):
    models = os.path.join(shared, 'models')
    if os.path.isdir(models):
        for name in sorted(os.listdir(models)):
            m = os.path.join(models, name)
            inputs = ['--input-dir', os.path.join(m, 'in')]
            yield ('model/' + name, os.path.join(m, 'model.onnx'), inputs,
                   ['exact', 'fast1', 'fast2', 'optimized', 'simplify'])
    for root in (os.path.join(shared, 'conformance', 'onnx-node-1.23'),
                 '/usr/share/libonnx-testdata/data/node'):
        if not os.path.isdir(root):
            continue
        tag = 'node-1.23/' if 'onnx-node-1.23' in root else 'node-1.12/'
        for name in sorted(os.listdir(root))[:node_limit]:
            m = os.path.join(root, name)
            ds = os.path.join(m, 'test_data_set_0')
            if not os.path.isfile(os.path.join(m, 'model.onnx')) or not os.path.isdir(ds):
                continue
            yield (tag + name, os.path.join(m, 'model.onnx'), ['--input-dir', ds],
                   ['exact', 'fast1', 'simplify'])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('omopt', nargs='?')
    ap.add_argument('out', nargs='?')
    ap.add_argument('--shared', default=os.environ.get('OMOPT_SHARED', '../shared'))
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--node-limit', type=int, default=None)
    ap.add_argument('--compare', nargs=2, metavar=('BEFORE', 'AFTER'))
    a = ap.parse_args()
    if a.compare:
        before, after = (json.load(open(p)) for p in a.compare)
        bad = 0
        for k in sorted(set(before) | set(after)):
            if before.get(k) != after.get(k):
                bad += 1
                print('differs: %s\n  before %s\n  after  %s' % (k, before.get(k), after.get(k)))
        print('%d cases, %d differ' % (len(set(before) | set(after)), bad))
        return 1 if bad else 0
    if not a.omopt or not a.out:
        ap.error('OMOPT and OUT are required')
    omopt = os.path.abspath(a.omopt)
    todo = list(cases(a.shared, a.node_limit))
    result = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(case, omopt, m, i, modes): k for k, m, i, modes in todo}
        for n, f in enumerate(cf.as_completed(futs)):
            result[futs[f]] = f.result()
            if n % 200 == 0:
                print('%d/%d' % (n, len(todo)), file=sys.stderr)
    with open(a.out, 'w') as f:
        json.dump(result, f, indent=0, sort_keys=True)
    print('%d cases written to %s' % (len(result), a.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
