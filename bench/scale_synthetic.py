#!/usr/bin/python3
"""How `omopt simplify` scales with the node count: synthetic graphs of cheap ops and shape
chains (issue 14, part a). Prints one table row per size: nodes before/after, wall seconds,
microseconds per node, peak RSS and RSS bytes per node; optionally ONNX Runtime's basic
optimizer + save on the same model (--ort, where it fits). Wall time counts what other
processes take from the machine; CPU time (user + system of the omopt process) is the steadier
figure on a shared machine. `load / passes / save` is omopt's own split of its wall time.

usage: bench/scale_synthetic.py [--sizes 1000,10000,100000,1000000] [--omopt PATH]
                                [--dir DIR] [--width W] [--ort] [--ort-max N] [--keep]

The graph: input x of shape (batch, 16), `--width` parallel chains of blocks summed at the end.
One block (18 nodes) gives every simplify pass work:
  Add of two constants (fold_constants) -> Add, Mul, Relu -> Identity (eliminate_identities)
  -> Transpose pair that cancels (fuse_transposes) -> Shape, Gather 0, Gather 1, Unsqueeze x2,
  Concat -> Reshape (fold_shape_chains: the target becomes a literal, dim 0 dynamic)
  -> two equal Relus (merge_common) -> Add, and a Neg nobody reads (eliminate_dead).
A block is one step of a chain; every chain starts at x. Models are written once to --dir
(default /tmp/omopt_scale) and reused. No test asserts a time: this prints numbers for notes.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = 18  # nodes per block
DIM = 16


def block(nodes, inits, h, p):
    """Appends one block reading value h; names start with p. Returns its output's name."""
    rnd = np.random.default_rng(len(nodes))
    inits.append(numpy_helper.from_array(rnd.standard_normal(DIM).astype(np.float32), p + 'ca'))
    inits.append(numpy_helper.from_array(rnd.standard_normal(DIM).astype(np.float32), p + 'cb'))
    mk = helper.make_node
    nodes += [
        mk('Add', [p + 'ca', p + 'cb'], [p + 'k']),
        mk('Add', [h, p + 'k'], [p + 'a']),
        mk('Mul', [p + 'a', 'half'], [p + 'm']),
        mk('Relu', [p + 'm'], [p + 'r']),
        mk('Identity', [p + 'r'], [p + 'i']),
        mk('Transpose', [p + 'i'], [p + 't1'], perm=[1, 0]),
        mk('Transpose', [p + 't1'], [p + 't2'], perm=[1, 0]),
        mk('Shape', [p + 't2'], [p + 's']),
        mk('Gather', [p + 's', 'zero'], [p + 'g0'], axis=0),
        mk('Gather', [p + 's', 'one'], [p + 'g1'], axis=0),
        mk('Unsqueeze', [p + 'g0', 'axes0'], [p + 'u0']),
        mk('Unsqueeze', [p + 'g1', 'axes0'], [p + 'u1']),
        mk('Concat', [p + 'u0', p + 'u1'], [p + 'c'], axis=0),
        mk('Reshape', [p + 't2', p + 'c'], [p + 'rs']),
        mk('Relu', [p + 'rs'], [p + 'd1']),
        mk('Relu', [p + 'rs'], [p + 'd2']),
        mk('Add', [p + 'd1', p + 'd2'], [p + 'o']),
        mk('Neg', [p + 'o'], [p + 'dead']),
    ]
    return p + 'o'


def make_model(nblocks, width, path):
    nodes, inits = [], [
        numpy_helper.from_array(np.array(0.5, np.float32), 'half'),
        numpy_helper.from_array(np.array(0, np.int64), 'zero'),
        numpy_helper.from_array(np.array(1, np.int64), 'one'),
        numpy_helper.from_array(np.array([0], np.int64), 'axes0'),
    ]
    width = max(1, min(width, nblocks))
    ends = []
    for w in range(width):
        h = 'x'
        for b in range(nblocks // width + (w < nblocks % width)):
            h = block(nodes, inits, h, 'c%d_b%d_' % (w, b))
        ends.append(h)
    nodes.append(helper.make_node('Sum', ends, ['y']))
    graph = helper.make_graph(
        nodes, 'scale', [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', DIM])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', DIM])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)],
                              producer_name='scale_synthetic')
    model.ir_version = 8
    onnx.save(model, path)
    return len(nodes)


def run_measured(cmd):
    """(returncode, wall s, CPU s (user + system), peak RSS bytes, stdout + stderr) of cmd
    run as a child (os.wait4 gives that child's own resource use)"""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return (p.returncode, time.monotonic() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024,
            out.decode(errors='replace'))


def node_count(path):
    m = onnx.load(path, load_external_data=False)
    return len(m.graph.node)


def fmt_bytes(b):
    for unit in ('B', 'KiB', 'MiB', 'GiB'):
        if b < 1024 or unit == 'GiB':
            return '%.1f %s' % (b, unit) if unit != 'B' else '%d B' % b
        b /= 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', default='1000,10000,100000,1000000')
    ap.add_argument('--omopt', default=os.path.join(HERE, '..', 'build', 'tools', 'omopt'))
    ap.add_argument('--dir', default=os.path.join(tempfile.gettempdir(), 'omopt_scale'))
    ap.add_argument('--width', type=int, default=16, help='parallel chains (default 16)')
    ap.add_argument('--ort', action='store_true',
                    help="also time ONNX Runtime's basic optimizer + save (node, ../shared/oracle)")
    ap.add_argument('--ort-max', type=int, default=100000,
                    help='largest node count given to ONNX Runtime (default 100000)')
    ap.add_argument('--keep', action='store_true', help='keep the simplified models')
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    oracle = os.path.join(HERE, '..', '..', 'shared', 'oracle', 'ort_run.js')
    hdr = ('| nodes | after | wall s | load / passes / save s | CPU s | CPU us/node | peak RSS '
           '| RSS B/node |' + (' ORT basic+save wall s | ORT CPU s | ORT peak RSS |' if a.ort else ''))
    print(hdr)
    print('|' + '---|' * (hdr.count('|') - 1))
    for size in (int(s) for s in a.sizes.split(',')):
        nblocks = max(1, (size - 1) // BLOCK)
        path = os.path.join(a.dir, 'scale_%d_w%d.onnx' % (size, a.width))
        if not os.path.exists(path):
            t0 = time.monotonic()
            make_model(nblocks, a.width, path + '.tmp')
            os.replace(path + '.tmp', path)
            print('# wrote %s in %.1f s' % (path, time.monotonic() - t0), file=sys.stderr)
        before = node_count(path)
        out = os.path.join(a.dir, 'scale_%d_w%d.simplified.onnx' % (size, a.width))
        rc, sec, cpu, rss, log = run_measured([a.omopt, 'simplify', path, out])
        if rc:
            print('| %d | failed: %s |' % (before, log.strip().splitlines()[-1:]))
            continue
        after = node_count(out)
        if not a.keep:
            os.remove(out)
        m = re.search(r'load ([0-9.]+) ms, passes ([0-9.]+) ms, save ([0-9.]+) ms', log)
        parts = ' / '.join('%.2f' % (float(x) / 1e3) for x in m.groups()) if m else '?'
        row = '| %d | %d | %.3f | %s | %.3f | %.2f | %s | %.0f |' % (
            before, after, sec, parts, cpu, 1e6 * cpu / before, fmt_bytes(rss), rss / before)
        if a.ort:
            if before <= a.ort_max and os.path.exists(oracle):
                with tempfile.TemporaryDirectory() as td:
                    x = os.path.join(td, 'x.npy')
                    np.save(x, np.ones((2, DIM), np.float32))
                    rc, osec, ocpu, orss, log = run_measured(
                        ['node', oracle, path, td, 'x=' + x, '--level', 'basic',
                         '--save-optimized', os.path.join(td, 'ort.onnx')])
                row += (' %.3f | %.3f | %s |' % (osec, ocpu, fmt_bytes(orss)) if not rc else
                        ' failed | %s | |' % (log.strip().splitlines() or ['?'])[-1][:60])
            else:
                row += ' - | - | - |'
        print(row, flush=True)


if __name__ == '__main__':
    main()
