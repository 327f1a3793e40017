#!/usr/bin/python3
"""Differential test cases for the indexing and generating operators (seed 000 §1-2, §5;
seed 001).

Writes small one-node cases in the ONNX backend-test layout (model.onnx,
test_data_set_0/input_N.pb, output_N.pb) under tests/cases/index/<case>/ (Gather, GatherElements,
GatherND, ScatterND, OneHot, NonZero, TopK) and tests/cases/generate/<case>/ (Constant,
ConstantOfShape, Range).

Every case is also computed by the numpy reference of the seed rule below. Where ONNX Runtime
agrees, its output is the expected value. Where the case exercises a documented departure of the
seed from ONNX Runtime (`departs=`), the reference's output is written instead, with a NOTE.txt
saying why. An unexpected disagreement is printed and the case is not written.

    /usr/bin/python3 tests/gen_cases_index.py            # regenerate everything (deterministic)
"""
import os, re, shutil, sys, zlib
import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.environ.get('OM_ORACLE', os.path.join(ROOT, '..', 'shared', 'oracle'))
if not os.path.isdir(ORACLE):
    ORACLE = '/work/shared/oracle'
sys.path.insert(0, ORACLE)
import mkcase  # noqa: E402

OUT = os.path.join(ROOT, 'tests', 'cases')
rng = np.random.default_rng(20261129)
stats = {'ort': 0, 'own': 0, 'skipped': 0}


# ---- case writing --------------------------------------------------------------------------------

def elem_type(dt):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)]


def build_model(op, inputs, attrs, opset, out_types, const_inputs):
    in_names = [n if a is not None else '' for n, a in inputs.items()]
    out_names = ['y%d' % i for i in range(len(out_types))]
    plain = {k: v for k, v in (attrs or {}).items() if not isinstance(v, onnx.AttributeProto)}
    node = helper.make_node(op, in_names, out_names, **plain)
    node.attribute.extend(v for v in (attrs or {}).values() if isinstance(v, onnx.AttributeProto))
    inits, g_in, feeds = [], [], {}
    for n, a in inputs.items():
        if a is None:
            continue
        if n in const_inputs:
            inits.append(numpy_helper.from_array(np.asarray(a), n))
        else:
            feeds[n] = np.asarray(a)
            g_in.append(helper.make_tensor_value_info(n, elem_type(a.dtype), a.shape))
    g_out = [helper.make_tensor_value_info(n, elem_type(t), None)
             for n, t in zip(out_names, out_types)]
    graph = helper.make_graph([node], 'case_' + op, g_in, g_out, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    return m, feeds


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == 'f':
        na, nb = np.isnan(a), np.isnan(b)
        if not np.array_equal(na, nb):
            return False
        return a[~na].tobytes() == b[~nb].tobytes()
    return np.array_equal(a, b)


def ort_message(e):
    """ONNX Runtime's error without its timestamped warnings and colour codes."""
    lines = [ln for ln in str(e).splitlines() if '[W:onnxruntime' not in ln]
    msg = re.sub(r'\x1b\[[0-9;]*m', '', '\n'.join(lines))
    return re.sub(r'Load model from \S+ failed:', 'Load model failed:', msg).strip()


def write_files(case_dir, model, feeds, outs):
    ds = os.path.join(case_dir, 'test_data_set_0')
    os.makedirs(ds, exist_ok=True)
    onnx.save(model, os.path.join(case_dir, 'model.onnx'))
    for i, (name, arr) in enumerate(feeds.items()):
        t = numpy_helper.from_array(np.asarray(arr), name)
        open(os.path.join(ds, 'input_%d.pb' % i), 'wb').write(t.SerializeToString())
    for i, (o, arr) in enumerate(zip(model.graph.output, outs)):
        t = numpy_helper.from_array(np.asarray(arr), o.name)
        open(os.path.join(ds, 'output_%d.pb' % i), 'wb').write(t.SerializeToString())


def case(group, name, op, inputs, ref, attrs=None, opset=18, const_inputs=(), departs=None,
         no_oracle=None):
    """ref: list of expected outputs by the seed's rule. departs: why ONNX Runtime may disagree
    (the reference is written, with a NOTE.txt). no_oracle: why ONNX Runtime is not asked."""
    case_dir = os.path.join(OUT, group, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    ref = [np.asarray(r) for r in ref]
    model, feeds = build_model(op, inputs, attrs, opset, [r.dtype for r in ref], const_inputs)
    note = no_oracle
    if not no_oracle:
        tmp = case_dir + '.ort'
        try:
            ort = mkcase.graph_case(tmp, model, feeds)
            shutil.rmtree(tmp, ignore_errors=True)
            if all(same(r, o) for r, o in zip(ref, ort)):
                write_files(case_dir, model, feeds, ref)
                stats['ort'] += 1
                return
            if not departs:
                print('MISMATCH %s/%s\n ref %r\n ort %r' % (group, name, ref, ort))
                stats['skipped'] += 1
                return
            note = departs + '\nONNX Runtime 1.30 gives:\n' + '\n'.join(repr(o) for o in ort)
        except mkcase.OracleError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if not departs:
                print('ORT REFUSES %s/%s: %s' % (group, name, ort_message(e)[:400]))
                stats['skipped'] += 1
                return
            note = departs + '\nONNX Runtime 1.30 refuses it: ' + ort_message(e)[:500]
    write_files(case_dir, model, feeds, ref)
    open(os.path.join(case_dir, 'NOTE.txt'), 'w').write(
        'Expected outputs come from the numpy reference of the seed rule '
        '(tests/gen_cases_index.py), not from ONNX Runtime.\n' + note + '\n')
    stats['own'] += 1


# ---- helpers -------------------------------------------------------------------------------------

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.bool_]


def rand_array(shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind == 'f':
        return (rng.standard_normal(shape) * 4).astype(dt)
    if dt.kind == 'u':
        return rng.integers(0, 100, size=shape).astype(dt)
    return rng.integers(-50, 50, size=shape).astype(dt)


def rand_shape(rank, lo=0, hi=4):
    return tuple(int(d) for d in rng.integers(lo, hi + 1, size=rank))


def rand_indices(shape, n, dt):
    if n == 0:
        shape = tuple(0 if i == 0 else d for i, d in enumerate(shape)) if shape else shape
        if not shape or int(np.prod(shape)) != 0:
            return None
        return np.zeros(shape, dt)
    return rng.integers(-n, n, size=shape).astype(dt)


def pick(seq):
    return seq[int(rng.integers(0, len(seq)))]


# ---- Gather family -------------------------------------------------------------------------------

def gen_gather():
    k = 0
    while k < 30:
        r = int(rng.integers(1, 4))
        shape = rand_shape(r, 0 if k % 5 == 0 else 1, 4)
        dt = DTYPES[k % len(DTYPES)]
        x = rand_array(shape, dt)
        axis = int(rng.integers(-r, r))
        n = shape[axis]
        q = int(rng.integers(0, 3))
        idt = pick([np.int32, np.int64])
        ix = rand_indices(rand_shape(q, 1 if n == 0 else 0, 3), n, idt)
        if ix is None or len(shape) - 1 + ix.ndim > 8:
            continue
        y = np.take(x, ix.astype(np.int64), axis=axis)
        attrs = {'axis': axis} if k % 3 else ({} if axis == 0 else {'axis': axis})
        case('index', 'gather_%02d' % k, 'Gather', {'x': x, 'i': ix}, [y], attrs,
             opset=pick([11, 13]), const_inputs=('i',) if k % 4 == 0 else ())
        k += 1


def gather_elements_ref(x, ix, axis):
    y = np.empty(ix.shape, x.dtype)
    for pos in np.ndindex(*ix.shape):
        p = list(pos)
        v = int(ix[pos])
        p[axis] = v + x.shape[axis] if v < 0 else v
        y[pos] = x[tuple(p)]
    return y


def gen_gather_elements():
    k = 0
    while k < 24:
        r = int(rng.integers(1, 4))
        shape = rand_shape(r, 1, 4)
        if k % 6 == 0:
            shape = shape[:-1] + (0,)
        dt = DTYPES[k % len(DTYPES)]
        x = rand_array(shape, dt)
        axis = int(rng.integers(-r, r))
        ishape = tuple(int(rng.integers(1 if d else 0, d + 1)) if i != axis % r else
                       int(rng.integers(0, 4)) for i, d in enumerate(shape))
        if shape[axis] == 0:
            ishape = tuple(0 if i == axis % r else d for i, d in enumerate(ishape))
        n = shape[axis]
        ix = (rng.integers(-n, n, size=ishape) if n else np.zeros(ishape)).astype(
            pick([np.int32, np.int64]))
        case('index', 'gather_elements_%02d' % k, 'GatherElements', {'x': x, 'i': ix},
             [gather_elements_ref(x, ix, axis % r)], {'axis': axis}, opset=pick([11, 13]))
        k += 1


def gather_nd_ref(x, ix, b):
    bshape = x.shape[:b]
    kk = ix.shape[-1]
    out_shape = ix.shape[:-1] + x.shape[b + kk:]
    y = np.empty(out_shape, x.dtype)
    for pos in np.ndindex(*ix.shape[:-1]):
        tup = tuple(int(v) for v in ix[pos])
        src = x[pos[:b]] if b else x
        y[pos] = src[tup]
    assert bshape == ix.shape[:b]
    return y


def gen_gather_nd():
    k = 0
    while k < 24:
        r = int(rng.integers(1, 4))
        shape = rand_shape(r, 1, 3)
        b = int(rng.integers(0, min(r, 2))) if k % 2 else 0
        q = int(rng.integers(max(1, b + 1), 4))
        kk = int(rng.integers(1, r - b + 1))
        dt = DTYPES[k % len(DTYPES)]
        x = rand_array(shape, dt)
        ishape = shape[:b] + rand_shape(q - 1 - b, 0 if k % 7 == 0 else 1, 3) + (kk,)
        ix = np.stack([rng.integers(-shape[b + j], shape[b + j], size=ishape[:-1])
                       for j in range(kk)], axis=-1).astype(np.int64).reshape(ishape)
        opset = 12 if b else pick([11, 12, 13])
        attrs = {'batch_dims': b} if b or (k % 3 == 0 and opset >= 12) else {}
        case('index', 'gather_nd_%02d' % k, 'GatherND', {'x': x, 'i': ix},
             [gather_nd_ref(x, ix, b)], attrs, opset=opset)
        k += 1


# ---- ScatterND -----------------------------------------------------------------------------------

def scatter_nd_ref(x, ix, u, red):
    y = x.copy()
    kk = ix.shape[-1]
    for pos in np.ndindex(*ix.shape[:-1]):
        tup = tuple(int(v) for v in ix[pos])
        o, up = y[tup], u[pos]
        if red == 'none':
            y[tup] = up
            continue
        with np.errstate(all='ignore'):
            if red == 'add':
                v = o + up
            elif red == 'mul':
                v = o * up
            elif red == 'max':
                v = np.where(up < o, o, up)  # seed: u < o ? o : u
            else:
                v = np.where(o < up, o, up)  # seed: o < u ? o : u
        y[tup] = v
    del kk
    return y


def gen_scatter_nd():
    k = 0
    while k < 40:
        red = ['none', 'add', 'mul', 'max', 'min'][k % 5]
        r = int(rng.integers(1, 4))
        shape = rand_shape(r, 1, 3)
        kk = int(rng.integers(1, r + 1))
        q = int(rng.integers(1, 3))
        lead = rand_shape(q - 1, 0 if k % 9 == 0 else 1, 3)
        dt = pick([np.float32, np.float64, np.int32, np.int64]) if red != 'none' else \
            DTYPES[k % len(DTYPES)]
        x = rand_array(shape, dt)
        ntup = int(np.prod(lead)) if lead else 1
        if red == 'none':  # distinct tuples (the spec's requirement)
            cells = int(np.prod(shape[:kk]))
            if ntup > cells:
                continue
            flat = rng.permutation(cells)[:ntup]
            tup = np.stack(np.unravel_index(flat, shape[:kk]), axis=-1) if ntup else \
                np.zeros((0, kk), np.int64)
            neg = rng.integers(0, 2, size=tup.shape).astype(bool)
            tup = np.where(neg, tup - np.array(shape[:kk]), tup)
        else:
            tup = np.stack([rng.integers(-shape[j], shape[j], size=ntup) for j in range(kk)],
                           axis=-1)
        ix = tup.astype(np.int64).reshape(lead + (kk,))
        u = rand_array(lead + shape[kk:], dt)
        if dt in (np.float32, np.float64) and k % 2 and x.size and u.size:
            x.flat[int(rng.integers(0, x.size))] = np.nan
            u.flat[int(rng.integers(0, u.size))] = np.nan
        attrs = {} if red == 'none' and k % 2 else {'reduction': red}
        opset = 18 if red in ('max', 'min') else (16 if attrs else pick([11, 13, 16]))
        case('index', 'scatter_nd_%02d_%s' % (k, red), 'ScatterND', {'x': x, 'i': ix, 'u': u},
             [scatter_nd_ref(x, ix, u, red)], attrs, opset=opset)
        k += 1


# ---- OneHot --------------------------------------------------------------------------------------

def onehot_ref(ix, depth, vals, axis):
    d = int(np.trunc(np.float64(depth))) if np.asarray(depth).dtype.kind == 'f' else int(depth)
    r = ix.ndim
    axis = axis + r + 1 if axis < 0 else axis
    y = np.empty(ix.shape[:axis] + (d,) + ix.shape[axis:], vals.dtype)
    y[...] = vals[0]
    for pos in np.ndindex(*ix.shape):
        v = ix[pos]
        if np.asarray(v).dtype.kind == 'f':  # selects the position it equals
            v = np.float64(v)
            if np.isnan(v) or v != np.trunc(v) or not (-d <= v < d):
                continue
        v = int(v)
        if not (-d <= v < d):
            continue
        v = v + d if v < 0 else v
        y[pos[:axis] + (v,) + pos[axis:]] = vals[1]
    return y


def gen_onehot():
    k = 0
    combos = [(np.int64, np.int64, np.int64), (np.float32, np.int64, np.int64),
              (np.int64, np.float32, np.int64), (np.int32, np.float32, np.int32),
              (np.float32, np.float32, np.float32), (np.int64, np.int32, np.float32),
              (np.int64, np.float32, np.float32), (np.int64, np.float32, np.int32),
              (np.int64, np.int64, np.float32), (np.uint8, np.int64, np.int8),
              (np.float64, np.float64, np.float16), (np.int64, np.int64, np.bool_)]
    while k < 30:
        it, dtp, vt = combos[k % len(combos)]
        r = int(rng.integers(0 if k % 6 == 5 else 1, 4))
        shape = rand_shape(r, 0 if k % 8 == 0 else 1, 3)
        depth = int(rng.integers(1, 6))
        if np.dtype(it).kind == 'f':
            ix = rng.integers(-depth - 2, depth + 2, size=shape).astype(it)
            if ix.size and k % 2:
                ix.flat[0] = np.nan
                ix.flat[-1] = 0.5
        elif np.dtype(it).kind == 'u':
            ix = rng.integers(0, depth + 2, size=shape).astype(it)
        else:
            ix = rng.integers(-depth - 2, depth + 2, size=shape).astype(it)
        dv = np.array(depth + 0.7 if np.dtype(dtp).kind == 'f' else depth, dtp)
        if k % 4 == 1:
            dv = dv.reshape(1)
        vals = rand_array((2,), vt)
        axis = int(rng.integers(-r - 1, r + 1))
        departs = None
        if r == 0:
            departs = 'OneHot with rank-0 indices: the seed accepts them (ONNX Runtime refuses).'
        elif np.dtype(it).kind == 'f' or np.dtype(dtp).kind == 'f':
            departs = ('Float indices/depth: a float index selects the position it equals (NaN and '
                       'fractions select nothing), a float depth truncates; ONNX Runtime lacks '
                       'most of these type combinations.')
        elif (it, dtp, vt) in [(np.uint8, np.int64, np.int8), (np.int64, np.int64, np.bool_)]:
            departs = 'Any numeric index/depth type and any value type (seed); ONNX Runtime ' \
                      'registers fewer combinations.'
        case('index', 'onehot_%02d' % k, 'OneHot', {'i': ix, 'd': dv, 'v': vals},
             [onehot_ref(ix, dv.reshape(()), vals, axis)], {'axis': axis},
             opset=pick([9, 11]) if axis >= 0 and (ix.min() >= 0 if ix.size and
                                                  np.dtype(it).kind != 'f' else True) else 11,
             const_inputs=('d',) if k % 2 == 0 else (), departs=departs)
        k += 1


# ---- NonZero -------------------------------------------------------------------------------------

def nonzero_ref(x):
    if x.ndim == 0:
        return np.zeros((1, 1 if x != 0 else 0), np.int64)
    return np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)


def gen_nonzero():
    for k in range(20):
        r = int(rng.integers(0, 4))
        shape = rand_shape(r, 0 if k % 5 == 0 else 1, 4)
        dt = DTYPES[k % len(DTYPES)]
        x = rand_array(shape, dt)
        if x.size and dt not in (np.bool_,):
            mask = rng.integers(0, 2, size=shape).astype(bool)
            x = np.where(mask, x, np.zeros_like(x)).astype(dt)
        if np.dtype(dt).kind == 'f' and x.size:
            x.flat[int(rng.integers(0, x.size))] = -0.0
            x.flat[int(rng.integers(0, x.size))] = np.nan
        departs = None
        if dt in (np.float64, np.int8):
            departs = 'NonZero on %s: the seed covers every numeric type; ONNX Runtime has ' \
                      'no kernel for it.' % np.dtype(dt).name
        case('index', 'nonzero_%02d' % k, 'NonZero', {'x': x}, [nonzero_ref(x)],
             opset=pick([9, 13]), departs=departs)


# ---- TopK ----------------------------------------------------------------------------------------

def topk_ref(x, kk, axis, largest):
    xm = np.moveaxis(x, axis, -1)
    vals = np.empty(xm.shape[:-1] + (kk,), x.dtype)
    idx = np.empty(xm.shape[:-1] + (kk,), np.int64)
    for pos in np.ndindex(*xm.shape[:-1]):
        row = xm[pos]
        if x.dtype.kind == 'f':
            keyf = (lambda j: (0 if np.isnan(row[j]) else 1, -float(row[j]), j)) if largest \
                else (lambda j: (1 if np.isnan(row[j]) else 0, float(row[j]), j))
        else:
            keyf = (lambda j: (-int(row[j]), j)) if largest else (lambda j: (int(row[j]), j))
        order = sorted(range(len(row)), key=keyf)[:kk]
        idx[pos] = order
        vals[pos] = row[order]
    return [np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)]


def gen_topk():
    k = 0
    while k < 36:
        r = int(rng.integers(1, 4))
        shape = list(rand_shape(r, 1, 4))
        axis = int(rng.integers(-r, r))
        if k % 6 == 0:
            shape[axis] = int(rng.integers(17, 40))  # the merge-sort path (k > 16)
        shape = tuple(shape)
        if k % 9 == 4:
            shape = shape[:-1] + (0,) if shape[axis] != 0 and (axis % r) != r - 1 else shape
        opset = pick([1, 10, 11])
        dt = pick([np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8]
                  if opset >= 11 else [np.float32, np.float64, np.float16])
        x = rand_array(shape, dt)
        if k % 2 and x.size:  # ties
            x = (np.round(x.astype(np.float64) / 8) * 8).astype(dt)
        nan = np.dtype(dt).kind == 'f' and k % 3 == 0 and x.size > 0
        if nan:
            for _ in range(2):
                x.flat[int(rng.integers(0, x.size))] = np.nan
        n = shape[axis]
        kk = int(rng.integers(0, n + 1)) if k % 6 else int(rng.integers(17, n + 1))
        largest = 1 if opset < 11 else int(rng.integers(0, 2))
        attrs = {'axis': axis} if opset >= 11 or axis >= 0 else {'axis': axis % r}
        if opset >= 11:
            attrs['largest'] = largest
            if k % 4 == 1:
                attrs['sorted'] = 1
        inputs = {'x': x}
        if opset < 10:
            if kk == 0:  # ONNX requires k >= 1 while it is an attribute
                continue
            attrs['k'] = kk
        else:
            inputs['k'] = np.array([kk], np.int64)
        departs = None
        if nan:
            departs = 'TopK with NaN: the seed orders NaN above every number (first when ' \
                      'largest, last when not); ONNX Runtime\'s placement depends on its code path.'
        elif dt in (np.int8, np.uint8, np.float16):
            departs = 'TopK on %s: the seed covers every numeric type; ONNX Runtime may lack ' \
                      'a kernel.' % np.dtype(dt).name
        case('index', 'topk_%02d' % k, 'TopK', inputs, topk_ref(x, kk, axis % r, largest),
             attrs, opset=opset, const_inputs=('k',) if k % 2 == 0 else (), departs=departs)
        k += 1


# ---- generate: Constant, ConstantOfShape, Range --------------------------------------------------

def gen_constant():
    forms = []
    for dt in [np.float32, np.int64, np.float16, np.uint8, np.bool_, np.float64, np.int8]:
        v = rand_array(rand_shape(int(rng.integers(0, 3)), 0, 3), dt)
        forms.append(('value_%s' % np.dtype(dt).name,
                      {'value': numpy_helper.from_array(v, 'v')}, v, 13))
    forms += [
        ('value_float', {'value_float': 2.5}, np.array(2.5, np.float32), 12),
        ('value_floats', {'value_floats': [1.5, -0.0, 3e38]},
         np.array([1.5, -0.0, 3e38], np.float32), 13),
        ('value_floats_empty', {'value_floats': onnx.AttributeProto(
            name='value_floats', type=onnx.AttributeProto.FLOATS)}, np.zeros((0,), np.float32), 13),
        ('value_int', {'value_int': -(2 ** 40)}, np.array(-(2 ** 40), np.int64), 12),
        ('value_ints', {'value_ints': [3, -1, 2 ** 62]}, np.array([3, -1, 2 ** 62], np.int64), 19),
        ('value_opset9', {'value': numpy_helper.from_array(np.arange(6, dtype=np.float32)
                                                           .reshape(2, 3), 'v')},
         np.arange(6, dtype=np.float32).reshape(2, 3), 9),
    ]
    for name, attrs, y, opset in forms:
        case('generate', 'constant_%s' % name, 'Constant', {}, [y], attrs, opset=opset)
    # strings: ONNX Runtime's npy path cannot return them; the reference is the attribute
    for name, attrs, y in [
            ('value_string', {'value_string': 'héllo'}, np.array('héllo'.encode(), dtype=object)),
            ('value_strings', {'value_strings': ['a', '', 'bc']},
             np.array([b'a', b'', b'bc'], dtype=object))]:
        case('generate', 'constant_%s' % name, 'Constant', {}, [y], attrs, opset=13,
             no_oracle='String outputs: the oracle\'s .npy exchange does not carry strings.')


def gen_constant_of_shape():
    k = 0
    for dt in [None, np.float32, np.int64, np.int32, np.float16, np.float64, np.uint8, np.int8,
               np.bool_, np.uint64]:
        for shape in ([2, 3], [], [0, 4], [1, 1, 2, 1]):
            shp = np.array(shape, np.int64)
            if dt is None:
                attrs, y = {}, np.zeros(shape, np.float32)
            else:
                v = rand_array((1,), dt)
                attrs, y = {'value': numpy_helper.from_array(v, 'v')}, np.full(shape, v[0], dt)
            case('generate', 'constant_of_shape_%02d' % k, 'ConstantOfShape', {'s': shp}, [y],
                 attrs, opset=pick([9, 20, 21]), const_inputs=('s',) if k % 2 else ())
            k += 1


def range_ref(s, l, d):
    t = np.asarray(s).dtype
    if t.kind == 'f':
        c = t if t != np.float16 else np.dtype(np.float32)
        diff = np.float64(l) - np.float64(s)  # difference and quotient in double
        n = int(max(np.ceil(diff / np.float64(d)), 0))
        i = np.arange(n).astype(c)
        return (np.asarray(s, c) + i * np.asarray(d, c)).astype(t)
    n = int(max(np.ceil(np.float64(int(l) - int(s)) / np.float64(int(d))), 0))
    return (int(s) + np.arange(n, dtype=np.int64) * int(d)).astype(t)


def gen_range():
    fixed = [(np.float32, 0, 0.3, 0.1), (np.float32, 0, 1, 0.1), (np.float32, 1, -1, -0.3),
             (np.float64, 0, 1, 0.1), (np.int32, 10, 4, -3), (np.int64, -5, 5, 2),
             (np.int16, 3, 3, 1), (np.int32, 0, 10, -1), (np.float32, 5, 1, 1),
             (np.int64, 0, 2 ** 40, 2 ** 38), (np.float16, 0.1, 2, 0.3), (np.float64, -2, 2, 0.37),
             # a float32 difference would change these counts (11, 40, 16)
             (np.float32, 8.733858, 41.733856, 3.3), (np.float32, 1.2129846, 12.912985, 0.3),
             (np.float32, 4.3050246, 21.905025, 1.1)]
    for k in range(12):
        dt = pick([np.float32, np.float64, np.int16, np.int32, np.int64])
        if np.dtype(dt).kind == 'f':
            s, l = (float(v) for v in rng.uniform(-20, 20, size=2))
            d = float(rng.uniform(0.05, 3)) * (1 if l >= s else -1) * (1 if k % 5 else -1)
        else:
            s, l = (int(v) for v in rng.integers(-30, 30, size=2))
            d = int(rng.integers(1, 7)) * (1 if l >= s else -1)
        fixed.append((dt, s, l, d))
    for k, (dt, s, l, d) in enumerate(fixed):
        s, l, d = np.array(s, dt), np.array(l, dt), np.array(d, dt)
        departs = None
        if np.dtype(dt).kind == 'f':
            departs = ('Range element i = start + i*delta (seed); ONNX Runtime accumulates '
                       'start + delta + delta + ..., which rounds differently.')
        if dt == np.float16:
            departs = 'Range on float16: computed in float32 and rounded (seed); ONNX Runtime ' \
                      'has no float16 Range kernel.'
        case('generate', 'range_%02d' % k, 'Range', {'s': s, 'l': l, 'd': d},
             [range_ref(s, l, d)], opset=pick([11, 13, 19]),
             const_inputs=('s', 'l', 'd') if k % 2 else (), departs=departs)


def gen_string_moves():
    """Moves of strings (16-byte om_str elements): reference only."""
    why = 'String tensors: the oracle\'s .npy exchange does not carry strings.'
    x = np.array([[b'a', b'bb', b''], [b'ccc', b'd', b'ee']], dtype=object)
    case('index', 'gather_strings', 'Gather', {'x': x, 'i': np.array([-1, 0, 2], np.int64)},
         [np.take(x, [2, 0, 2], axis=1)], {'axis': 1}, opset=13, const_inputs=('x', 'i'),
         no_oracle=why)
    vals = np.array([b'off', b'on'], dtype=object)
    ix = np.array([0, -1, 7], np.int64)
    case('index', 'onehot_strings', 'OneHot', {'i': ix, 'd': np.array(3, np.int64), 'v': vals},
         [onehot_ref(ix, 3, vals, -1)], opset=11, const_inputs=('v',), no_oracle=why)


GENERATORS = {'gather': gen_gather, 'gather_elements': gen_gather_elements,
              'gather_nd': gen_gather_nd, 'scatter_nd': gen_scatter_nd, 'onehot': gen_onehot,
              'nonzero': gen_nonzero, 'topk': gen_topk, 'constant': gen_constant,
              'constant_of_shape': gen_constant_of_shape, 'range': gen_range,
              'strings': gen_string_moves}

if __name__ == '__main__':
    only = sys.argv[1:]
    if not only:  # everything: start from empty folders so no stale case survives
        for group in ('index', 'generate'):
            shutil.rmtree(os.path.join(OUT, group), ignore_errors=True)
    for g in only or list(GENERATORS):
        rng = np.random.default_rng(zlib.crc32(g.encode()))  # each generator reproducible alone
        GENERATORS[g]()
    print(stats)
