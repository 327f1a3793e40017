"""test_omopt.py — the Python package over libomopt.so: simplify and run against the omopt CLI
(the same bytes, the same outputs bit for bit), the ONNX Runtime-shaped session API, errors.
Run by meson (tests/meson.build) with OMOPT_LIBRARY and PYTHONPATH set to the build."""
import ctypes
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import omopt

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('OMOPT_BUILD', os.path.join(SRC, 'build'))
OMOPT = os.path.join(BUILD, 'tools', 'omopt')
EXAMPLE = os.path.join(SRC, 'examples', 'tiny_shuffle.onnx')
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(SRC, '..', 'shared'))


def cli(*args):
    return subprocess.run([OMOPT, *args], check=True, capture_output=True)


def test_kinds_match_the_library():
    """_lib's exception per om_kind number is the library's kind of that number (omopt.h keeps
    the numbers fixed); no number past OM_ERR_INTERNAL is a kind the library returns."""
    from omopt import _lib
    names = {1: 'InvalidModel', 2: 'InvalidInput', 3: 'Unsupported', 4: 'Io', 5: 'NoMemory',
             6: 'Internal'}
    assert sorted(_lib._KINDS) == sorted(names)
    for k, name in names.items():
        assert _lib.lib.om_kind_name(k).decode() == name
        assert _lib._KINDS[k].__name__ in (name, name + 'Error')
    assert _lib.lib.om_kind_name(7).decode() == 'Unknown'
    assert 'test_break_pass' not in dict(_lib.SimplifyOptions._fields_)


def test_version():
    assert omopt.__version__.count('.') == 2
    assert all(p.isdigit() for p in omopt.__version__.split('.'))


def test_simplify_matches_cli(tmp_path):
    cli('simplify', EXAMPLE, str(tmp_path / 'cli.onnx'))
    want = (tmp_path / 'cli.onnx').read_bytes()
    with open(EXAMPLE, 'rb') as f:
        original = f.read()
    assert omopt.simplify(EXAMPLE) == want               # a path gives bytes
    assert omopt.simplify(original) == want              # bytes give bytes
    out = tmp_path / 'py.onnx'
    assert omopt.simplify(EXAMPLE, output=out) == out    # or the file written
    assert out.read_bytes() == want
    assert len(want) < len(original)
    # python3 -m omopt writes the same file
    subprocess.run([sys.executable, '-m', 'omopt', 'simplify', EXAMPLE, str(tmp_path / 'm.onnx')],
                   check=True, capture_output=True, env=os.environ)
    assert (tmp_path / 'm.onnx').read_bytes() == want


def test_simplify_model_proto():
    onnx = pytest.importorskip('onnx')
    m = onnx.load(EXAMPLE)
    s = omopt.simplify(m)
    assert isinstance(s, onnx.ModelProto)
    assert len(s.graph.node) < len(m.graph.node)
    assert [i.name for i in s.graph.input] == [i.name for i in m.graph.input]


def test_session_io():
    s = omopt.InferenceSession(EXAMPLE)
    [x] = s.get_inputs()
    assert x.name == 'image' and x.type == 'tensor(float)'
    assert len(x.shape) == 4 and isinstance(x.shape[0], str)   # a symbolic batch
    assert [o.type for o in s.get_outputs()] == ['tensor(float)'] * len(s.get_outputs())


def test_io_info_struct_size():
    """_lib.IoInfo is om_io_info: the library fills the whole struct (memset included), so
    a Python struct shorter than the C one is written past its end."""
    from omopt._lib import IoInfo, Status, lib
    s = omopt.InferenceSession(EXAMPLE)
    n = ctypes.sizeof(IoInfo)
    buf = (ctypes.c_ubyte * (n + 64))(*([0xAB] * (n + 64)))
    st = Status()
    assert lib.om_session_input_info(s._sess, 0, ctypes.cast(buf, ctypes.POINTER(IoInfo)),
                                     ctypes.byref(st)) == 0
    assert bytes(buf[n:]) == b'\xab' * 64
    assert IoInfo.from_buffer(buf).name == b'image'


def run_cli(model, feeds, out_dir):
    args = ['run', model, '--output-dir', str(out_dir), '--output-format', 'npy']
    for name, a in feeds.items():
        p = out_dir / f'in_{name}.npy'
        np.save(p, a)
        args += ['--input', f'{name}={p}']
    cli(*args)
    return [np.load(p) for p in sorted(glob.glob(str(out_dir / 'output_*.npy')),
                                       key=lambda p: int(p.rsplit('_', 1)[1][:-4]))]


def assert_bitwise(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def test_run_matches_cli(tmp_path):
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
    s = omopt.InferenceSession(EXAMPLE)
    got = s.run(None, {'image': x})
    assert_bitwise(got, run_cli(EXAMPLE, {'image': x}, tmp_path))
    # a non-contiguous view of the same values gives the same result
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not xt.flags['C_CONTIGUOUS']
    assert_bitwise(s.run(None, {'image': xt}), got)
    name = s.get_outputs()[0].name
    assert_bitwise(s.run([name], {'image': x}), got[:1])


@pytest.mark.parametrize('name', sorted(os.path.basename(d) for d in
                                        glob.glob(os.path.join(SHARED, 'models', '*'))))
def test_shared_models_match_cli(name, tmp_path):
    d = os.path.join(SHARED, 'models', name)
    s = omopt.InferenceSession(os.path.join(d, 'model.onnx'))
    feeds = {a.name: np.load(os.path.join(d, 'in', a.name + '.npy')) for a in s.get_inputs()}
    assert_bitwise(s.run(None, feeds), run_cli(os.path.join(d, 'model.onnx'), feeds, tmp_path))


def test_errors(tmp_path):
    with pytest.raises(omopt.InvalidModel) as e:
        omopt.simplify(b'not a model')
    assert e.value.kind == 'InvalidModel'
    with pytest.raises(omopt.IoError):
        omopt.InferenceSession(str(tmp_path / 'missing.onnx'))
    s = omopt.InferenceSession(EXAMPLE)
    with pytest.raises(omopt.InvalidInput):
        s.run(None, {})
    with pytest.raises(omopt.InvalidInput) as e:
        s.run(None, {'image': np.zeros((1, 8, 16, 16), np.float32)})   # 8 channels, not 3
    assert e.value.kind == 'InvalidInput' and "'image'" in e.value.message
    with pytest.raises(omopt.InvalidInput) as e:
        s.run(None, {'image': np.zeros((1, 3, 16, 16), np.float64)})
    assert 'double' in e.value.message
    with pytest.raises(omopt.InvalidInput):
        s.run(['no_such_output'], {'image': np.zeros((1, 3, 16, 16), np.float32)})
    with pytest.raises(TypeError):
        omopt.simplify(42)


def test_time_limit():
    """A Loop of 3.4e15 iterations (fuzz finding Z7) ends at max_run_ms."""
    model = os.path.join(SRC, 'fuzz', 'corpus', 'models', 'repro_loop_huge_trip_count.onnx')
    s = omopt.InferenceSession(model, max_run_ms=100)
    with pytest.raises(omopt.InvalidInput) as e:
        s.run(None, {'x': np.ones((2, 4), np.float32)})
    assert 'max_run_ms' in e.value.message


def test_torch_export(tmp_path):
    """A real PyTorch export (skipped without python3-torch and python3-torchvision):
    exported, simplified from its ModelProto, run by the package and by the CLI."""
    torch = pytest.importorskip('torch')
    torchvision = pytest.importorskip('torchvision')
    onnx = pytest.importorskip('onnx')
    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=10).eval()
    for m in net.modules():  # realistic BatchNorm statistics
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    path = tmp_path / 'resnet18.onnx'
    torch.onnx.export(net, torch.randn(1, 3, 32, 32), str(path), input_names=['x'],
                      output_names=['logits'], dynamic_axes={'x': {0: 'N'}, 'logits': {0: 'N'}},
                      opset_version=13)
    model = onnx.load(str(path))
    small = omopt.simplify(model)
    # (torch folds BatchNorm into Conv when exporting in eval mode: little is left to do)
    assert len(small.graph.node) <= len(model.graph.node)
    # every inferred shape (every value but 'logits'), as onnx-simplifier writes them; the size
    # rule counts everything but value_info
    assert len(small.graph.value_info) == len(small.graph.node) - 1
    bare = onnx.ModelProto()
    bare.CopyFrom(small)
    del bare.graph.value_info[:]
    assert bare.ByteSize() <= model.ByteSize()
    # 'all' (older scripts) is the same
    every = omopt.simplify(model, shapes='all')
    assert len(every.graph.value_info) == len(small.graph.value_info)
    assert small.graph.input[0].type.tensor_type.shape.dim[0].dim_param == 'N'
    onnx.save(small, str(tmp_path / 'small.onnx'))
    x = np.random.default_rng(2).standard_normal((2, 3, 32, 32)).astype(np.float32)
    s = omopt.InferenceSession(str(tmp_path / 'small.onnx'))
    assert s.get_inputs()[0].shape == ['N', 3, 32, 32]
    got = s.run(None, {'x': x})
    assert_bitwise(got, run_cli(str(tmp_path / 'small.onnx'), {'x': x}, tmp_path))
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    assert np.allclose(got[0], want, rtol=1e-3, atol=1e-4)
    # each layout of the activations between the convs (om_layout_choice), two threads
    for layout in ('blocked', 'nhwc', 'nchw'):
        s = omopt.InferenceSession(str(tmp_path / 'small.onnx'), threads=2, layout=layout)
        assert np.allclose(s.run(None, {'x': x})[0], want, rtol=1e-3, atol=1e-4), layout
    with pytest.raises(ValueError):
        omopt.InferenceSession(str(tmp_path / 'small.onnx'), layout='nchw16c')


def test_sequences_and_optionals(tmp_path):
    """Sequence inputs and outputs as lists, optionals as None or a value."""
    onnx = pytest.importorskip('onnx')
    h, T = onnx.helper, onnx.TensorProto
    seq = h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, None))
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, None))
    g = h.make_graph(
        [h.make_node('SequenceInsert', ['s', 'x'], ['s2']),
         h.make_node('SequenceLength', ['s2'], ['n']),
         h.make_node('OptionalHasElement', ['o'], ['has'])], 'g',
        [h.make_value_info('s', seq), h.make_tensor_value_info('x', T.FLOAT, [2]),
         h.make_value_info('o', opt)],
        [h.make_value_info('s2', seq), h.make_tensor_value_info('n', T.INT64, []),
         h.make_tensor_value_info('has', T.BOOL, [])])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 18)])
    s = omopt.InferenceSession(m.SerializeToString(), optimize=False)
    assert [a.type for a in s.get_inputs()] == ['seq(tensor(float))', 'tensor(float)',
                                                'optional(tensor(float))']
    a, b, x = (np.arange(3, dtype=np.float32), np.ones((2, 2), np.float32),
               np.array([5, 6], np.float32))
    s2, n, has = s.run(None, {'s': [a, b], 'x': x, 'o': None})
    assert isinstance(s2, list) and len(s2) == 3 and n == 3 and not has
    for got, want in zip(s2, [a, b, x]):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    _, n, has = s.run(None, {'s': [], 'x': x, 'o': a})
    assert n == 1 and has
    with pytest.raises(omopt.InvalidInput):
        s.run(None, {'s': a, 'x': x, 'o': None})   # an array where a list belongs


def test_maps(tmp_path):
    """ZipMap gives a list of dicts (as ONNX Runtime's Python API does), DictVectorizer and
    CastMap take dicts; a map inside an optional and a sequence of maps go both ways."""
    onnx = pytest.importorskip('onnx')
    h, T = onnx.helper, onnx.TensorProto
    ml = 'ai.onnx.ml'

    def map_t(k, v):
        t = onnx.TypeProto()
        t.map_type.key_type = k
        t.map_type.value_type.CopyFrom(h.make_tensor_type_proto(v, None))
        return t
    seqmap = h.make_sequence_type_proto(map_t(T.STRING, T.FLOAT))
    g = h.make_graph(
        [h.make_node('ZipMap', ['x'], ['z'], domain=ml, classlabels_strings=['b', 'a', 'c']),
         h.make_node('DictVectorizer', ['d'], ['v'], domain=ml,
                     string_vocabulary=['a', 'c', 'b', 'z']),
         h.make_node('CastMap', ['cm'], ['c'], domain=ml, cast_to='TO_INT64'),
         h.make_node('Identity', ['sm'], ['sm2']),
         h.make_node('Identity', ['om'], ['om2'])], 'g',
        [h.make_tensor_value_info('x', T.FLOAT, ['N', 3]), h.make_value_info('d', map_t(
            T.STRING, T.DOUBLE)), h.make_value_info('cm', map_t(T.INT64, T.FLOAT)),
         h.make_value_info('sm', seqmap),
         h.make_value_info('om', h.make_optional_type_proto(map_t(T.INT64, T.STRING)))],
        [h.make_value_info('z', seqmap), h.make_tensor_value_info('v', T.DOUBLE, [1, 4]),
         h.make_tensor_value_info('c', T.INT64, [1, None]), h.make_value_info('sm2', seqmap),
         h.make_value_info('om2', h.make_optional_type_proto(map_t(T.INT64, T.STRING)))])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 18), h.make_opsetid(ml, 1)])
    s = omopt.InferenceSession(m.SerializeToString())
    x = np.array([[0.5, 0.25, 0.125], [1, -2, 3]], np.float32)
    z, v, c, sm2, om2 = s.run(None, {'x': x, 'd': {'a': 4.0, 'c': 8, 'q': 1.0},
                                     'cm': {7: 2.9, -3: -1.5}, 'sm': [{'k': 1.5}, {}],
                                     'om': {4: 'four'}})
    assert z == [{'b': 0.5, 'a': 0.25, 'c': 0.125}, {'b': 1.0, 'a': -2.0, 'c': 3.0}]
    assert all(type(k) is str and type(e) is float for d in z for k, e in d.items())
    assert v.dtype == np.float64 and v.tolist() == [[4.0, 8.0, 0.0, 0.0]]
    assert c.dtype == np.int64 and c.tolist() == [[-1, 2]]
    assert sm2 == [{'k': 1.5}, {}] and om2 == {4: 'four'}
    _, _, _, _, om2 = s.run(None, {'x': x, 'd': {}, 'cm': {}, 'sm': [], 'om': None})
    assert om2 is None
    assert s.get_inputs()[1].type == 'map(string,tensor(double))'
    with pytest.raises(omopt.InvalidInput):
        s.run(None, {'x': x, 'd': [1.0], 'cm': {}, 'sm': [], 'om': None})  # not a dict
    with pytest.raises(omopt.InvalidInput):
        s.run(None, {'x': x, 'd': {'a': 1.0, 2: 3.0}, 'cm': {}, 'sm': [], 'om': None})


def test_boundary_boxes():
    """tests/cases/boundary/boxes (tests/gen_cases_boundary.py): a list of arrays, an optional
    (an array or None), dicts int -> float and str -> float come back as given, and ZipMap's
    int64 labels give a list of dicts int -> float; all of them empty too."""
    s = omopt.InferenceSession(os.path.join(SRC, 'tests', 'cases', 'boundary', 'boxes',
                                            'model.onnx'))
    assert [a.type for a in s.get_outputs()] == [
        'seq(tensor(float))', 'optional(tensor(float))', 'map(int64,tensor(float))',
        'map(string,tensor(float))', 'seq(map(int64,tensor(float)))']
    seq = [np.array([1.5, -2], np.float32), np.array([[3]], np.float32),
           np.zeros((0, 2), np.float32)]
    o = np.array([4, 5, 6], np.float32)
    mi = {5: 0.25, -9: 1e30, 0: -3.5}
    ms = {'alpha': 1.0, '': -0.0, '\u03b2': 2.5}
    x = np.array([[0.5, 0.25, 0.125], [1, -2, 3]], np.float32)
    s2, o2, mi2, ms2, z = s.run(None, {'s': seq, 'o': o, 'mi': mi, 'ms': ms, 'x': x})
    assert isinstance(s2, list) and len(s2) == 3
    for got, want in zip(s2, seq):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)
    assert o2.dtype == np.float32 and o2.tolist() == [4, 5, 6]
    assert mi2 == {5: 0.25, -9: np.float32(1e30), 0: -3.5}
    assert ms2 == ms and np.signbit(ms2[''])
    assert all(type(k) is int for k in mi2) and all(type(k) is str for k in ms2)
    assert z == [{7: 0.5, -1: 0.25, 3: 0.125}, {7: 1.0, -1: -2.0, 3: 3.0}]
    assert all(type(k) is int and type(e) is float for d in z for k, e in d.items())
    s2, o2, mi2, ms2, z = s.run(None, {'s': [], 'o': None, 'mi': {}, 'ms': {}, 'x': x[:0]})
    assert s2 == [] and o2 is None and mi2 == {} and ms2 == {} and z == []


def test_outputs_own_their_memory():
    """Numeric outputs are arrays over the library's buffers (no copy): writable, with the
    right values and dtypes, independent from run to run, alive after the session is closed
    and freed with the last array over them."""
    onnx = pytest.importorskip('onnx')
    import gc
    import weakref
    h, T = onnx.helper, onnx.TensorProto
    g = h.make_graph(
        [h.make_node('Add', ['x', 'x'], ['y']), h.make_node('Shape', ['x'], ['s']),
         h.make_node('Cast', ['x'], ['e'], to=T.FLOAT16)], 'g',
        [h.make_tensor_value_info('x', T.FLOAT, ['N', 3])],
        [h.make_tensor_value_info('y', T.FLOAT, ['N', 3]),
         h.make_tensor_value_info('s', T.INT64, [2]),
         h.make_tensor_value_info('e', T.FLOAT16, ['N', 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 18)])
    s = omopt.InferenceSession(m.SerializeToString())
    x = np.arange(3000 * 3, dtype=np.float32).reshape(3000, 3)
    y1, sh, e = s.run(None, {'x': x})
    y2, _, _ = s.run(None, {'x': x})
    assert y1.dtype == np.float32 and y1.shape == (3000, 3) and np.array_equal(y1, 2 * x)
    assert sh.dtype == np.int64 and sh.tolist() == [3000, 3]
    assert e.dtype == np.float16 and np.array_equal(e, x.astype(np.float16))
    assert y1.flags.writeable and y1.ctypes.data != y2.ctypes.data
    y1[0, 0] = -1
    assert y2[0, 0] == 0
    (z,) = s.run(['y'], {'x': np.zeros((0, 3), np.float32)})
    assert z.shape == (0, 3)
    s.close()
    del s
    gc.collect()
    assert np.array_equal(y2, 2 * x) and y1[0, 0] == -1
    base = y2.base
    while getattr(base, 'base', None) is not None and not isinstance(base, ctypes.Array):
        base = base.base
    assert isinstance(base, ctypes.Array)  # the library's buffer, not a copy
    freed = weakref.finalize(base, lambda: None)
    view = y2[1:]
    del y2, base
    gc.collect()
    assert freed.alive and view[0, 0] == 6
    del view
    gc.collect()
    assert not freed.alive


def test_string_tensors():
    """String tensors in (str, bytes or object arrays) and out (object arrays of str)."""
    onnx = pytest.importorskip('onnx')
    h, T = onnx.helper, onnx.TensorProto
    g = h.make_graph(
        [h.make_node('StringConcat', ['x', 'y'], ['z']),
         h.make_node('Shape', ['z'], ['s'])], 'g',
        [h.make_tensor_value_info('x', T.STRING, ['N']),
         h.make_tensor_value_info('y', T.STRING, [1])],
        [h.make_tensor_value_info('z', T.STRING, ['N']),
         h.make_tensor_value_info('s', T.INT64, [1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 20)])
    s = omopt.InferenceSession(m.SerializeToString())
    z, shape = s.run(None, {'x': np.array(['a', 'héllo', '']), 'y': np.array([b'!'])})
    assert z.dtype == object and z.tolist() == ['a!', 'héllo!', '!'] and shape.tolist() == [3]
    z, = s.run(['z'], {'x': np.array(['x', 'y'], dtype=object).reshape(2),
                       'y': np.array(['-'], dtype=object)})
    assert z.tolist() == ['x-', 'y-']
    z, = s.run(['z'], {'x': np.array([], dtype=str), 'y': np.array(['?'])})
    assert z.shape == (0,)
    with pytest.raises(omopt.InvalidInput):
        s.run(None, {'x': np.array([1, 'a'], dtype=object), 'y': np.array(['!'])})


def dims_of(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def test_simplify_options(tmp_path):
    """input_shapes, outputs/inputs, shapes, inline_functions: as the CLI's options (the same
    bytes), checked on the result; errors name what is wrong."""
    onnx = pytest.importorskip('onnx')
    m = onnx.load(EXAMPLE)
    # value_info by default, not with shapes=False; declarations unchanged either way
    s = omopt.simplify(m)
    assert len(s.graph.value_info) == len(s.graph.node) - 1
    assert dims_of(s.graph.input[0]) == ['batch', 3, 16, 16]
    assert not omopt.simplify(m, shapes=False).graph.value_info
    # input shapes, as --input-shape
    f = omopt.simplify(m, input_shapes={'image': [2, 3, 16, 16]})
    assert dims_of(f.graph.input[0]) == [2, 3, 16, 16]
    assert dims_of(f.graph.output[0])[0] == 2
    cli('simplify', EXAMPLE, str(tmp_path / 'cli.onnx'), '--input-shape', 'image:B,3,16,16')
    assert omopt.simplify(EXAMPLE, input_shapes={'image': ['B', 3, 16, 16]}) == \
        (tmp_path / 'cli.onnx').read_bytes()
    subprocess.run([sys.executable, '-m', 'omopt', 'simplify', EXAMPLE, str(tmp_path / 'm.onnx'),
                    '--input-shape', 'image:B,3,16,16'], check=True, capture_output=True,
                   env=os.environ)
    assert (tmp_path / 'm.onnx').read_bytes() == (tmp_path / 'cli.onnx').read_bytes()
    with pytest.raises(omopt.InvalidInput, match="input shape of 'image': dim 1 is declared 3"):
        omopt.simplify(m, input_shapes={'image': [1, 4, 16, 16]})
    with pytest.raises(ValueError):
        omopt.simplify(m, input_shapes={'image': [1, -3, 16, 16]})
    # a sub-model: from the first Relu to the output, the same outputs as the whole model
    s = omopt.simplify(m, inputs=['stem_relu'], outputs=['logits'])
    assert [i.name for i in s.graph.input] == ['stem_relu']
    assert dims_of(s.graph.input[0]) == ['batch', 8, 16, 16]  # typed by inference
    with pytest.raises(omopt.InvalidInput, match="'nope'"):
        omopt.simplify(m, outputs=['nope'])
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    probe = onnx.load(EXAMPLE)
    probe.graph.output.append(onnx.ValueInfoProto(name='stem_relu'))
    whole = omopt.InferenceSession(probe, optimize=False)
    logits, mid = whole.run(None, {'image': x})
    [tail] = omopt.InferenceSession(s).run(None, {'stem_relu': mid})
    assert np.allclose(tail, logits, rtol=1e-5, atol=1e-6)
    # functions: inlined by default, kept on request
    fn = os.path.join(SRC, 'tests', 'functions', 'attrs.onnx')
    assert not omopt.simplify(onnx.load(fn)).functions
    kept = omopt.simplify(onnx.load(fn), inline_functions=False)
    assert [f.name for f in kept.functions] == ['Unused', 'ScaleAdd']
def _outputs(model, feeds):
    return omopt.InferenceSession(model, optimize=False).run(None, feeds)


def test_simplify_check_passes_and_catches_a_broken_pass():
    plain = omopt.simplify(EXAMPLE)
    assert omopt.simplify(EXAMPLE, check=3) == plain
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
    assert omopt.simplify(EXAMPLE, check=1, check_inputs={'image': x}) == plain
    with pytest.raises(omopt.CheckFailed) as e:
        omopt.simplify(EXAMPLE, check=2, check_inputs={'image': x}, test_break_pass='fold_constants')
    err = e.value
    assert err.failed_run == 0 and isinstance(err.model, bytes)
    assert 'image=2 (given)' in err.how or 'batch=2 (given)' in err.how
    # the reported differences are those of the two models' outputs on x
    want, got = _outputs(EXAMPLE, {'image': x}), _outputs(err.model, {'image': x})
    assert [d.name for d in err.differences] == [o.name for o in
                                                 omopt.InferenceSession(EXAMPLE).get_outputs()]
    for d, w, g in zip(err.differences, want, got):
        assert d.state == 'over' and d.shape == list(w.shape)
        assert d.max_abs == pytest.approx(float(np.abs(w - g).max()), rel=1e-6)
        assert d.ref_max == pytest.approx(float(np.abs(w).max()), rel=1e-6)
        assert d.max_rel == pytest.approx(d.max_abs / d.ref_max)
    assert 'differs from the original in run 1' in str(err)
    # loose tolerances let the same model through
    omopt.simplify(EXAMPLE, check=1, check_inputs={'image': x}, rtol=1e3,
                   test_break_pass='fold_constants')


def test_compare_names_the_first_differing_value():
    x = np.random.default_rng(2).standard_normal((1, 3, 16, 16)).astype(np.float32)
    same = omopt.compare(EXAMPLE, omopt.simplify(EXAMPLE), inputs={'image': x})
    assert same and all(d.state in ('ok', 'skipped') for d in same)
    broken = omopt.simplify(EXAMPLE, test_break_pass='fold_constants')
    diffs = omopt.compare(EXAMPLE, broken, inputs={'image': x})
    first = next(d for d in diffs if d.state not in ('ok', 'skipped'))
    # the first Conv reads the broken weight: its output is the first value that differs
    assert first.op == 'Conv' and first.ref_op == 'Conv' and first.node == first.ref_node
    assert first.max_abs > 0.1
    assert [d.name for d in diffs] == [d.name for d in same]
