#!/usr/bin/python3
"""Generate the differential cases of the shape and move operators (seed §2-4).

    /usr/bin/python3 tests/gen_cases_move.py [--only OP] [--shared ../shared]

Writes tests/cases/view/<op>_<n>/ (Shape Size Squeeze Unsqueeze Flatten Reshape Identity Dropout)
and tests/cases/move/<op>_<n>/ (Transpose Concat Split Slice Expand Tile Pad Trilu) in the ONNX
backend-test layout, with ONNX Runtime's outputs (../shared/oracle/mkcase.py). Random small
shapes (0-sized and rank 0 included), negative axes, every attribute/input form, several element
types; some inputs are initializers so that the plan sees them as constants.

Where the seed deliberately departs from ONNX Runtime (reflect pads of n or more, reflect on an
axis of extent 1, which ONNX Runtime refuses) the expected output comes from the numpy reference
of the seed rule below, and the case folder has a NOTE.txt saying so.
Deterministic: the same seed gives the same folders.
"""
import argparse, os, shutil, sys
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument('--only', default=None)
ap.add_argument('--shared', default=None, help='default: ../shared beside the checkout (or '
                'beside the main checkout when run from a git worktree)')
args = ap.parse_args()
if not args.shared:
    here = os.path.dirname(os.path.abspath(__file__))
    args.shared = os.path.join(here, '..', '..', 'shared')
    if not os.path.isdir(args.shared):
        import subprocess
        common = subprocess.run(['git', '-C', here, 'rev-parse', '--git-common-dir'],
                                capture_output=True, text=True).stdout.strip()
        args.shared = os.path.join(here, common, '..', '..', 'shared')
sys.path.insert(0, os.path.join(args.shared, 'oracle'))
import mkcase  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cases')
VIEW = {'Shape', 'Size', 'Squeeze', 'Unsqueeze', 'Flatten', 'Reshape', 'Identity', 'Dropout'}
rng = np.random.default_rng(20261129)
DTYPES = [np.float32, np.int64, np.int32, np.uint8, np.int8, np.float16, np.float64, np.bool_,
          np.uint16, np.int16, np.uint32, np.uint64]
counts, refused = {}, []


def data(shape, dtype=None):
    dtype = dtype or DTYPES[rng.integers(len(DTYPES))]
    n = int(np.prod(shape)) if len(shape) else 1
    if dtype == np.bool_:
        a = rng.integers(0, 2, n).astype(np.bool_)
    elif np.issubdtype(dtype, np.floating):
        a = (rng.integers(-50, 50, n) / 4).astype(dtype)
        if n > 2:
            a[rng.integers(n)] = -0.0  # signed zeros pass through
    else:
        info = np.iinfo(dtype)
        a = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype)
    return a.reshape(shape)


def shape(rank_lo=0, rank_hi=4, hi=4, zero=True):
    r = int(rng.integers(rank_lo, rank_hi + 1))
    lo = 0 if zero and rng.random() < 0.15 else 1
    return tuple(int(rng.integers(lo, hi + 1)) for _ in range(r))


def folder(op):
    i = counts.get(op, 0)
    counts[op] = i + 1
    return os.path.join(ROOT, 'view' if op in VIEW else 'move', '%s_%03d' % (op.lower(), i))


def case(op, inputs, attrs=None, opset=17, n_outputs=1, const=(), out_types=None):
    """A case with ONNX Runtime's outputs; returns them, or None when ORT refused the case."""
    if args.only and op != args.only:
        return None
    d = folder(op)
    shutil.rmtree(d, ignore_errors=True)
    try:
        return mkcase.node_case(d, op, inputs, attrs or {}, opset=opset, n_outputs=n_outputs,
                                const_inputs=const, out_types=out_types)
    except mkcase.OracleError as e:
        counts[op] -= 1
        refused.append((op, opset, str(e).splitlines()[-1][-200:]))
        return None


def own_case(op, inputs, outputs, attrs=None, opset=17, const=(), note=''):
    """A case whose outputs are the seed rule's (numpy reference below), with a NOTE.txt."""
    if args.only and op != args.only:
        return
    d = folder(op)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    names = [n if a is not None else '' for n, a in inputs.items()]
    node = helper.make_node(op, names, ['y%d' % i for i in range(len(outputs))], **(attrs or {}))
    g_in, inits, feeds = [], [], []
    for n, a in inputs.items():
        if a is None:
            continue
        if n in const:
            inits.append(numpy_helper.from_array(np.asarray(a), n))
        else:
            feeds.append((n, np.asarray(a)))
            g_in.append(helper.make_tensor_value_info(n, mkcase._elem_type(a.dtype), a.shape))
    g_out = [helper.make_tensor_value_info('y%d' % i, mkcase._elem_type(o.dtype), o.shape)
             for i, o in enumerate(outputs)]
    g = helper.make_graph([node], 'case_' + op, g_in, g_out, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, 'model.onnx'))
    ds = os.path.join(d, 'test_data_set_0')
    for i, (n, a) in enumerate(feeds):
        open(os.path.join(ds, 'input_%d.pb' % i), 'wb').write(
            numpy_helper.from_array(a, n).SerializeToString())
    for i, o in enumerate(outputs):
        open(os.path.join(ds, 'output_%d.pb' % i), 'wb').write(
            numpy_helper.from_array(o, 'y%d' % i).SerializeToString())
    open(os.path.join(d, 'NOTE.txt'), 'w').write(note.strip() + '\n')


def i64(*v):
    return np.array(v, dtype=np.int64)


def pick_const(*names):
    return tuple(n for n in names if rng.random() < 0.5)


# ---- view operators --------------------------------------------------------------------------

def gen_view():
    for _ in range(10):
        x = data(shape(0, 4))
        case('Shape', {'x': x}, opset=13, out_types=[np.int64])
    for _ in range(10):
        x = data(shape(0, 4))
        r = x.ndim
        attrs = {}
        if rng.random() < 0.8:
            attrs['start'] = int(rng.integers(-r - 2, r + 3))
        if rng.random() < 0.8:
            attrs['end'] = int(rng.integers(-r - 2, r + 3))
        case('Shape', {'x': x}, attrs, opset=15, out_types=[np.int64])
    for _ in range(6):
        case('Size', {'x': data(shape(0, 4))}, opset=13, out_types=[np.int64])
    for _ in range(14):  # Squeeze: attribute (11) and input (13) forms, none = all extent-1
        s = list(shape(0, 3, zero=True))
        for _ in range(int(rng.integers(0, 3))):
            s.insert(int(rng.integers(0, len(s) + 1)), 1)
        x = data(tuple(s))
        ones = [i for i, d in enumerate(s) if d == 1]
        k = int(rng.integers(0, len(ones) + 1))
        ax = [int(a - len(s)) if rng.random() < 0.5 else int(a)
              for a in rng.permutation(ones)[:k]]
        if rng.random() < 0.5:
            case('Squeeze', {'x': x}, {'axes': ax} if ax or rng.random() < 0.3 else {}, opset=11)
        else:
            inp = {'x': x, 'axes': i64(*ax)} if ax else {'x': x}
            case('Squeeze', inp, opset=13, const=pick_const('axes'))
    for _ in range(14):  # Unsqueeze: axes index the output
        x = data(shape(0, 3))
        k = int(rng.integers(1, 4))
        R = x.ndim + k
        ax = [int(a - R) if rng.random() < 0.5 else int(a) for a in rng.permutation(R)[:k]]
        if rng.random() < 0.5:
            case('Unsqueeze', {'x': x}, {'axes': ax}, opset=11)
        else:
            case('Unsqueeze', {'x': x, 'axes': i64(*ax)}, opset=13, const=pick_const('axes'))
    for _ in range(12):  # Flatten: axis in [-r, r]
        x = data(shape(0, 4))
        r = x.ndim
        opset = int(rng.choice([9, 13]))
        a = int(rng.integers(0 if opset < 11 else -r, r + 1))
        case('Flatten', {'x': x}, {'axis': a} if rng.random() < 0.9 else {}, opset=opset)
    for _ in range(18):  # Reshape: 0 copies (or is literal with allowzero), -1 takes the rest
        x = data(shape(0, 4))
        s = list(x.shape)
        rng.shuffle(s)
        # regroup: merge or split dims randomly
        if len(s) >= 2 and rng.random() < 0.5:
            s = [s[0] * s[1]] + s[2:]
        tgt = list(s)
        allowzero = int(rng.random() < 0.3)
        for i in range(len(tgt)):
            if not allowzero and i < x.ndim and tgt[i] == x.shape[i] and rng.random() < 0.5:
                tgt[i] = 0
        if (int(np.prod(s)) if s else 1) != x.size:
            tgt = [x.size]
        if rng.random() < 0.5 and tgt and (not allowzero or 0 not in tgt):
            j = int(rng.integers(len(tgt)))
            if tgt[j] != 0 or not allowzero:
                rest = [tgt[i] if tgt[i] else x.shape[i] for i in range(len(tgt)) if i != j]
                if int(np.prod(rest)) != 0:
                    tgt[j] = -1
        attrs = {'allowzero': allowzero} if allowzero or rng.random() < 0.3 else {}
        opset = 14 if attrs else int(rng.choice([5, 13, 14]))
        case('Reshape', {'x': x, 'shape': i64(*tgt)}, attrs, opset=opset,
             const=pick_const('shape'))
    for dt in (np.float32, np.int64, np.bool_, np.float16):
        case('Identity', {'x': data(shape(0, 3), dt)}, opset=16)
    # Dropout: inference; the mask is all true
    x = data((2, 3), np.float32)
    case('Dropout', {'x': x}, opset=13)
    case('Dropout', {'x': x}, opset=13, n_outputs=2, out_types=[np.float32, np.bool_])
    case('Dropout', {'x': x, 'ratio': np.array(0.7, np.float32),
                     'training_mode': np.array(False)}, opset=13, n_outputs=2,
         const=('ratio', 'training_mode'), out_types=[np.float32, np.bool_])
    case('Dropout', {'x': data((3, 0), np.float64), 'ratio': np.array(0.2, np.float32)},
         opset=12, n_outputs=2, out_types=[np.float64, np.bool_])
    x = data((4,), np.float16)
    own_case('Dropout', {'x': x}, [x, np.ones(4, np.bool_)], {'ratio': 0.3}, opset=10, note='''
Expected output from the seed's rule (seed §2: Dropout in inference, the mask is all true), not
ONNX Runtime: ONNX Runtime 1.30 returns an all-false mask for Dropout-10 (opset 12+ gives all
true).''')
    case('Dropout', {'x': data((2, 2), np.float32)}, opset=7)


# ---- move operators --------------------------------------------------------------------------

def gen_transpose():
    for i in range(26):
        s = shape(0, 5, hi=4)
        while i % 3 == 0 and not 200 < np.prod(s) < 2500:  # some across 32x32 tile edges
            s = shape(2, 3, hi=70, zero=False)
        x = data(s)
        if x.ndim and rng.random() < 0.85:
            case('Transpose', {'x': x}, {'perm': [int(p) for p in rng.permutation(x.ndim)]},
                 opset=int(rng.choice([1, 13, 21])))
        else:
            case('Transpose', {'x': x}, opset=13)


def gen_concat():
    for _ in range(16):
        s = shape(1, 4)
        r = len(s)
        ax = int(rng.integers(-r, r))
        dt = DTYPES[rng.integers(len(DTYPES))]
        ins = {}
        for k in range(int(rng.integers(1, 5))):
            t = list(s)
            t[ax] = int(rng.integers(0, 4))
            ins['x%d' % k] = data(tuple(t), dt)
        case('Concat', ins, {'axis': ax}, opset=int(rng.choice([4, 11, 13])),
             const=pick_const(*list(ins)[1:]))


def gen_split():
    for _ in range(18):
        s = shape(1, 3, hi=7)
        r = len(s)
        ax = int(rng.integers(-r, r))
        e = s[ax]
        x = data(s)
        form = rng.integers(4)
        if form == 0:  # equal parts (opset 11, 13)
            divs = [d for d in range(1, 5) if e % d == 0] or [1]
            n = int(rng.choice(divs))
            case('Split', {'x': x}, {'axis': ax}, opset=int(rng.choice([11, 13])), n_outputs=n)
        elif form == 1:  # sizes: attribute before 13, input from 13
            cuts = sorted(rng.integers(0, e + 1, int(rng.integers(0, 3))))
            sizes = [int(b - a) for a, b in zip([0] + list(cuts), list(cuts) + [e])]
            if rng.random() < 0.5:
                case('Split', {'x': x}, {'axis': ax, 'split': sizes}, opset=11,
                     n_outputs=len(sizes))
            else:
                case('Split', {'x': x, 'split': i64(*sizes)}, {'axis': ax}, opset=13,
                     n_outputs=len(sizes), const=pick_const('split'))
        else:  # opset 18: ceil parts, the last takes the rest
            n = int(rng.integers(1, 4))
            if e and (-(-e // n)) * (n - 1) > e:
                n = 2
            case('Split', {'x': x}, {'axis': ax, 'num_outputs': n}, opset=18, n_outputs=n)


SENTINELS = [2**63 - 1, -2**63, 2**31 - 1, -2**31]


def slice_bound(n):
    u = rng.random()
    if u < 0.2:
        return int(rng.choice(SENTINELS))
    return int(rng.integers(-n - 3, n + 4))


def gen_slice():
    for i in range(50):
        x = data(shape(1, 4, hi=6))
        r = x.ndim
        k = int(rng.integers(1, r + 1))
        axes = [int(a) for a in rng.permutation(r)[:k]]
        starts = [slice_bound(x.shape[a]) for a in axes]
        ends = [slice_bound(x.shape[a]) for a in axes]
        steps = []
        for _ in axes:
            u = rng.random()
            steps.append(int(rng.choice([2**63 - 1, -2**63, 2**31, -(2**31) - 5]))
                         if u < 0.1 else int(rng.choice([-3, -2, -1, -1, 1, 1, 1, 2, 3])))
        neg_axes = [a - r if rng.random() < 0.5 else a for a in axes]
        if i % 6 == 0:  # attribute form (opsets 1-9): positive axes, no steps
            attrs = {'starts': starts, 'ends': ends}
            if rng.random() < 0.7:
                attrs['axes'] = axes
            else:
                attrs = {'starts': [slice_bound(x.shape[a]) for a in range(k)],
                         'ends': [slice_bound(x.shape[a]) for a in range(k)]}
            case('Slice', {'x': x}, attrs, opset=9)
            continue
        opset = int(rng.choice([10, 11, 13]))
        ins = {'x': x, 'starts': i64(*starts), 'ends': i64(*ends),
               'axes': i64(*(axes if opset == 10 else neg_axes)), 'steps': i64(*steps)}
        if rng.random() < 0.2:
            ins['steps'] = None
            if rng.random() < 0.5 and axes == list(range(k)):
                ins['axes'] = None
        if rng.random() < 0.2:  # int32 indices
            for n in ('starts', 'ends', 'axes', 'steps'):
                if ins[n] is not None:
                    ins[n] = np.clip(ins[n], -2**31, 2**31 - 1).astype(np.int32)
        case('Slice', ins, opset=opset, const=pick_const('starts', 'ends', 'axes', 'steps'))


def gen_expand():
    for _ in range(14):
        s = shape(0, 3)
        tgt = []
        lead = int(rng.integers(0, 3))
        tgt = [int(rng.integers(1, 4)) for _ in range(lead)]
        for d in s:  # broadcast-compatible entries (bidirectional: 1 vs d)
            u = rng.random()
            tgt.append(d if u < 0.4 else 1 if u < 0.7 else (int(rng.integers(0, 4)) if d == 1 else d))
        if rng.random() < 0.3 and len(tgt) > 1:
            tgt = tgt[int(rng.integers(1, len(tgt))):]
        case('Expand', {'x': data(s), 'shape': i64(*tgt)}, opset=int(rng.choice([8, 13])),
             const=pick_const('shape'))


def gen_tile():
    for _ in range(12):
        x = data(shape(0, 3))
        rep = [int(rng.integers(0, 4)) if rng.random() < 0.2 else int(rng.integers(1, 4))
               for _ in range(x.ndim)]
        case('Tile', {'x': x, 'repeats': i64(*rep)}, opset=int(rng.choice([6, 13])),
             const=pick_const('repeats'))


def pad_ref(x, begins, ends, mode, value):
    """The seed's Pad (§4). Constant: the overlap with the input is copied. Edge, reflect, wrap:
    negative pads crop first, then the kept part is padded (ONNX Runtime's reading); reflect
    continues periodically (period 2*(n-1), extent 1 repeats). None when the seed errors."""
    def src(n, i):
        if mode == 'constant':
            return i if 0 <= i < n else -1
        if mode == 'edge':
            return min(max(i, 0), n - 1)
        if mode == 'wrap':
            return i % n
        if n == 1:
            return 0
        p = 2 * (n - 1)
        m = i % p
        return m if m < n else p - m
    out_shape = [d + b + e for d, b, e in zip(x.shape, begins, ends)]
    y = np.empty(out_shape, x.dtype)
    if y.size == 0:
        return y
    if mode == 'constant':
        los, ns, shifts = [0] * x.ndim, list(x.shape), list(begins)
    else:
        los = [max(0, -b) for b in begins]
        ns = [d - max(0, -b) - max(0, -e) for d, b, e in zip(x.shape, begins, ends)]
        shifts = [max(0, b) for b in begins]
        if min(ns) <= 0:
            return None
    for idx in np.ndindex(*out_shape):
        s = [src(ns[a], o - shifts[a]) for a, o in enumerate(idx)]
        y[idx] = value if min(s, default=0) < 0 else x[tuple(lo + k for lo, k in zip(los, s))]
    return y


def gen_pad():
    modes = ['constant', 'edge', 'reflect', 'wrap']
    for i in range(48):
        s = shape(1, 3, hi=5, zero=False)
        x = data(s)
        r = x.ndim
        mode = modes[i % 4]
        opset = 19 if mode == 'wrap' else int(rng.choice([11, 13, 18, 19]))
        axes = list(range(r))
        if opset >= 18 and rng.random() < 0.5:
            axes = [int(a) for a in rng.permutation(r)[:int(rng.integers(1, r + 1))]]
        begins = [int(rng.integers(-1, 4)) for _ in axes]
        ends = [int(rng.integers(-1, 4)) for _ in axes]
        if mode in ('reflect', 'wrap') and rng.random() < 0.3:  # beyond one period
            j = int(rng.integers(len(axes)))
            begins[j] = int(s[axes[j]] + rng.integers(0, 4))
        fb, fe = [0] * r, [0] * r
        for a, b, e in zip(axes, begins, ends):
            fb[a], fe[a] = b, e
        if any(d + b + e < 0 for d, b, e in zip(s, fb, fe)):
            continue
        value = data((), x.dtype) if mode == 'constant' and rng.random() < 0.6 else None
        ins = {'x': x, 'pads': i64(*(begins + ends)), 'value': value}
        sax = [a - r if rng.random() < 0.5 else a for a in axes]
        if axes != list(range(r)) or (opset >= 18 and rng.random() < 0.3):
            ins['axes'] = i64(*sax)
        const = pick_const('pads', 'value', 'axes')
        y = pad_ref(x, fb, fe, mode, 0 if value is None else value)
        if y is None:
            continue
        kept = [d - max(0, -b) - max(0, -e) for d, b, e in zip(s, fb, fe)]
        if mode == 'wrap' and any(b > k for b, k in zip(fb, kept)):
            own_case('Pad', ins, [y], {'mode': mode}, opset=opset, const=const, note="""
Expected output from the seed's rule (seed §4: wrap is periodic with period n), not ONNX
Runtime: ONNX Runtime 1.30 fills a leading wrap pad larger than the extent with zeros instead
of continuing the period. Computed by pad_ref in tests/gen_cases_move.py.""")
            continue
        outs = case('Pad', ins, {'mode': mode}, opset=opset, const=const)
        if outs is None and mode == 'reflect':
            own_case('Pad', ins, [y], {'mode': mode}, opset=opset, const=const, note="""
Expected output from the seed's rule (seed §4), not ONNX Runtime: a reflect pad of n or more on
an axis (or reflect on an axis of extent 1) continues the reflection periodically with period
2*(n-1) (extent 1 repeats its element); n is the extent left after negative pads crop. ONNX
Runtime refuses this input. Computed by pad_ref in tests/gen_cases_move.py.""")
        elif outs is not None:
            assert outs[0].shape == y.shape and outs[0].tobytes() == y.tobytes(), (ins, mode, outs, y)
    for _ in range(4):  # attribute form (opset 2): pads and a float value
        x = data(shape(1, 3, zero=False), np.float32)
        pads = [int(rng.integers(0, 3)) for _ in range(2 * x.ndim)]
        mode = str(rng.choice(['constant', 'edge', 'reflect']))
        if mode == 'reflect' and any(p >= d for p, d in zip(pads, list(x.shape) * 2)):
            mode = 'edge'
        case('Pad', {'x': x}, {'pads': pads, 'value': 1.5, 'mode': mode}, opset=2)
    # extent 1 reflect and empty axes with constant mode
    x = data((1, 3), np.float32)
    own_case('Pad', {'x': x, 'pads': i64(2, 1, 1, 1)},
             [pad_ref(x, [2, 1], [1, 1], 'reflect', 0)], {'mode': 'reflect'}, opset=13,
             note="""
Expected output from the seed's rule (seed §4), not ONNX Runtime: reflect on an axis of extent 1
repeats its only element (ONNX Runtime refuses the axis). Computed by pad_ref in
tests/gen_cases_move.py.""")
    case('Pad', {'x': data((0, 2), np.float32), 'pads': i64(1, 0, 1, 1)}, {'mode': 'constant'},
         opset=13)


def gen_trilu():
    for _ in range(14):
        s = shape(2, 4, hi=5)
        ins = {'x': data(s, [np.float32, np.float64, np.int64, np.bool_][rng.integers(4)])}
        if rng.random() < 0.8:
            ins['k'] = np.array(int(rng.integers(-6, 7)) if rng.random() < 0.9 else
                                int(rng.choice([2**63 - 1, -2**63])), np.int64)
        attrs = {'upper': int(rng.integers(0, 2))} if rng.random() < 0.8 else {}
        case('Trilu', ins, attrs, opset=14, const=pick_const('k'))


if args.only:
    for sub in ('view', 'move'):
        for f in os.listdir(os.path.join(ROOT, sub)) if os.path.isdir(os.path.join(ROOT, sub)) else []:
            if f.rsplit('_', 1)[0] == args.only.lower():
                shutil.rmtree(os.path.join(ROOT, sub, f))
else:
    shutil.rmtree(os.path.join(ROOT, 'view'), ignore_errors=True)
    shutil.rmtree(os.path.join(ROOT, 'move'), ignore_errors=True)
def gen_empty_lists():
    """Empty index inputs read as omitted ones (as ONNX Runtime); fixed data, after the rest."""
    x = np.arange(12, dtype=np.float32).reshape(1, 4, 1, 3)
    case('Squeeze', {'x': x, 'axes': i64()}, opset=13)
    case('Split', {'x': x, 'split': i64()}, {'axis': 1}, opset=13, n_outputs=2)
    case('Split', {'x': x, 'split': i64()}, {'axis': -1}, opset=18, n_outputs=2)
    case('Slice', {'x': x, 'starts': i64(), 'ends': i64()}, opset=13)
    note = '''
Expected output from the seed's rule (seed §2, Split from opset 18: parts of ceil(extent / n),
the last part taking the rest; num_outputs defaults to the output count), not ONNX Runtime,
which refuses this input (%s).'''
    own_case('Split', {'x': x}, [x[..., :2], x[..., 2:]], {'axis': -1}, opset=18,
             note=note % 'no num_outputs: it asks for equal parts')
    y = np.arange(2, dtype=np.int64)
    own_case('Split', {'x': y}, [y[:1], y[1:], y[2:]], {'num_outputs': 3}, opset=18,
             note=note % 'num_outputs 3 on an extent of 2: the last part is empty')


gen_view()
gen_transpose()
gen_concat()
gen_split()
gen_slice()
gen_expand()
gen_tile()
gen_pad()
gen_trilu()
gen_empty_lists()
for op, n in sorted(counts.items()):
    print('%-10s %d' % (op, n))
for r in refused:
    print('refused by ORT:', *r)
