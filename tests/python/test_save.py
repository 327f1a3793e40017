"""test_save.py — simplify(..., output=) saves through the library's om_model_save, as the
command does: symlinks at every name it uses are never written through, the input's own
external-data file is refused (and the input still runs the same), a failed save (ulimit -f)
leaves nothing, and SIGINT / SIGTERM during a large save leave no temporary file."""
import os
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import omopt

BUILD = os.environ.get('OMOPT_BUILD', os.path.join(os.path.dirname(__file__), '..', '..',
                                                   'build'))
OMOPT = os.path.join(BUILD, 'tools', 'omopt')


def _varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7f) | (0x80 if v > 0x7f else 0))
        v >>= 7
        if not v:
            return bytes(out)


def _int(field, v):
    return _varint(field << 3) + _varint(v)


def _msg(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def make_model(path, n, base=1.0, external=None):
    """y = Identity(x + w), w float32[n] = base + i % 4096 (n a multiple of 4096; simplify drops
    the Identity), written as ONNX protobuf by hand (w's bytes written once, straight from
    numpy: hundreds of MB take a second); external: w's bytes go to that file beside it (ONNX's
    external data, as onnx.save_model writes it)."""
    raw = np.tile(base + np.arange(4096, dtype=np.float32), n // 4096)
    tensor = _int(1, n) + _int(2, 1) + _msg(8, b'w')
    if external:
        entries = [(b'location', external.encode()), (b'offset', b'0'),
                   (b'length', str(raw.nbytes).encode())]
        tensor += b''.join(_msg(13, _msg(1, k) + _msg(2, v)) for k, v in entries) + _int(14, 1)
        raw.tofile(os.path.join(os.path.dirname(str(path)), external))
        raw_head, raw = b'', raw[:0]
    else:
        raw_head = _varint(9 << 3 | 2) + _varint(raw.nbytes)
    ttype = _msg(1, _int(1, 1) + _msg(2, _msg(1, _int(1, n))))  # tensor(float)[n]

    def node(ins, out, op):
        return b''.join(_msg(1, i) for i in ins) + _msg(2, out) + _msg(4, op)
    before = (_msg(1, node([b'x', b'w'], b't', b'Add')) + _msg(1, node([b't'], b'y', b'Identity'))
              + _msg(2, b'g'))
    after = _msg(11, _msg(1, b'x') + _msg(2, ttype)) + _msg(12, _msg(1, b'y') + _msg(2, ttype))
    init_len = len(tensor) + len(raw_head) + raw.nbytes
    init_head = _varint(5 << 3 | 2) + _varint(init_len)
    graph_len = len(before) + len(init_head) + init_len + len(after)
    with open(path, 'wb') as f:
        f.write(_int(1, 8) + _msg(8, _int(2, 13)) + _varint(7 << 3 | 2) + _varint(graph_len))
        f.write(before + init_head + tensor + raw_head)
        raw.tofile(f)
        f.write(after)


def run(path, n):
    return omopt.InferenceSession(str(path)).run(None, {'x': np.ones(n, np.float32)})[0]


def names(folder):
    return sorted(os.listdir(folder))


def data_files(folder, model):
    return [f for f in names(folder) if f.startswith(model + '.') and f.endswith('.data')
            and len(f) == len(model) + 22]


def test_symlinks_never_followed(tmp_path):
    victim = tmp_path / 'victim'
    victim.write_bytes(b'victim\n')
    make_model(tmp_path / 'in.onnx', 4096)
    (tmp_path / 'first').mkdir()
    omopt.simplify(str(tmp_path / 'in.onnx'), output=tmp_path / 'first' / 'out.onnx',
                   external_data=True)
    [data] = data_files(tmp_path / 'first', 'out.onnx')
    d = tmp_path / 'l'
    d.mkdir()
    # the model's name, its weights file's name, the fixed temporary name of old versions
    for name in ('out.onnx', data, 'out.onnx.omopt-tmp'):
        os.symlink('../victim', d / name)
    out = omopt.simplify(str(tmp_path / 'in.onnx'), output=d / 'out.onnx', external_data=True)
    assert out == d / 'out.onnx'
    assert victim.read_bytes() == b'victim\n'
    assert not os.path.islink(d / 'out.onnx')
    assert os.path.islink(d / data) and os.path.islink(d / 'out.onnx.omopt-tmp')
    [data1] = [f for f in data_files(d, 'out.onnx') if not os.path.islink(d / f)]
    assert data1 != data  # the next name: the symlink is left, not written through
    np.testing.assert_array_equal(run(d / 'out.onnx', 4096), run(tmp_path / 'in.onnx', 4096))
    assert names(d) == sorted(['out.onnx', data, data1, 'out.onnx.omopt-tmp'])


def test_input_weights_file_refused(tmp_path):
    """The input's external-data file as output: refused from Python as from the command,
    nothing written; the input still runs the same."""
    make_model(tmp_path / 'in.onnx', 4096, external='in.onnx.data')
    before = (tmp_path / 'in.onnx.data').read_bytes()
    y0 = run(tmp_path / 'in.onnx', 4096)
    with pytest.raises(omopt.IoError, match="in.onnx.data' holds external data"):
        omopt.simplify(str(tmp_path / 'in.onnx'), output=tmp_path / 'in.onnx.data')
    p = subprocess.run([OMOPT, 'simplify', str(tmp_path / 'in.onnx'),
                        str(tmp_path / 'in.onnx.data')], capture_output=True, text=True)
    assert p.returncode == 1 and "in.onnx.data' holds external data" in p.stderr
    assert names(tmp_path) == ['in.onnx', 'in.onnx.data']
    assert (tmp_path / 'in.onnx.data').read_bytes() == before
    np.testing.assert_array_equal(run(tmp_path / 'in.onnx', 4096), y0)
    # in place, weights outside: a file of its own; the one onnx wrote is not the save's
    omopt.simplify(str(tmp_path / 'in.onnx'), output=tmp_path / 'in.onnx', external_data=True)
    [data] = data_files(tmp_path, 'in.onnx')
    assert names(tmp_path) == sorted(['in.onnx', 'in.onnx.data', data])
    assert (tmp_path / 'in.onnx.data').read_bytes() == before
    np.testing.assert_array_equal(run(tmp_path / 'in.onnx', 4096), y0)


def test_failed_save_leaves_nothing(tmp_path):
    make_model(tmp_path / 'in.onnx', 1 << 20)  # 4 MiB
    (tmp_path / 'D').mkdir()
    with pytest.raises(omopt.IoError, match='is a folder'):
        omopt.simplify(str(tmp_path / 'in.onnx'), output=tmp_path / 'D', external_data=True)
    assert names(tmp_path) == ['D', 'in.onnx'] and names(tmp_path / 'D') == []

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    for ext in (False, True):
        code = ('import omopt; omopt.simplify(%r, output=%r, external_data=%r)'
                % (str(tmp_path / 'in.onnx'), str(tmp_path / 'out.onnx'), ext))
        p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                           preexec_fn=limit, env=os.environ)
        assert p.returncode == 1, p.stderr
        assert 'IoError' in p.stderr and 'File too large' in p.stderr
        assert names(tmp_path) == ['D', 'in.onnx']


@pytest.fixture(scope='module')
def big_model(tmp_path_factory):
    n = 48 << 20  # 192 MiB: its save (written, fsynced) takes a good part of a second
    path = tmp_path_factory.mktemp('big') / 'in.onnx'
    make_model(path, n)
    yield path, n
    os.remove(path)  # pytest keeps its last runs' folders: not this much of them


SAVER = '''
import sys, omopt
omopt.simplify(sys.argv[1], output=sys.argv[2], external_data=sys.argv[3] == '1')
'''


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_signal_during_save(tmp_path, sig, big_model):
    """Python's handlers run once om_model_save has returned (SIGINT: KeyboardInterrupt), and
    the package holds SIGTERM off during a save: the save completes, then the process ends;
    no temporary file is left either way."""
    path, n = big_model
    for ext in ('0', '1'):
        p = subprocess.Popen([sys.executable, '-c', SAVER, str(path),
                              str(tmp_path / 'out.onnx'), ext], stderr=subprocess.PIPE,
                             text=True, env=os.environ)
        t0 = time.monotonic()
        while not any(f.startswith('.out.onnx.') for f in os.listdir(tmp_path)):
            assert p.poll() is None and time.monotonic() - t0 < 60
            time.sleep(0.001)
        p.send_signal(sig)
        err = p.communicate()[1]
        if sig == signal.SIGINT:
            # KeyboardInterrupt, then Python ends by SIGINT itself (as uncaught ones do)
            assert p.returncode == -signal.SIGINT and 'KeyboardInterrupt' in err
        else:
            assert p.returncode == -signal.SIGTERM
        left = names(tmp_path)
        assert not [f for f in left if f.startswith('.')], left
        assert left[0] == 'out.onnx' and len(left) == (2 if ext == '1' else 1)
        info = subprocess.run([OMOPT, 'info', str(tmp_path / 'out.onnx')], capture_output=True)
        assert info.returncode == 0  # the model and its weights are whole
        assert sum(os.path.getsize(tmp_path / f) for f in left) >= 4 * n
        for f in left:
            os.remove(tmp_path / f)
