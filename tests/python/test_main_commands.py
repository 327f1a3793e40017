"""test_main_commands.py — python3 -m omopt has every command of `omopt`: run (outputs written
only when the run succeeds), info, dot, compare, simplify."""
import os
import subprocess
import sys

import numpy as np

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
EXAMPLE = os.path.join(SRC, 'examples', 'tiny_shuffle.onnx')
IMAGE = os.path.join(SRC, 'examples', 'image.npy')


def py(*args):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in [os.path.join(SRC, 'python'),
                                                    env.get('PYTHONPATH', '')] if p)
    return subprocess.run([sys.executable, '-m', 'omopt', *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_run_info_dot_compare(tmp_path):
    import omopt
    x = np.load(IMAGE)
    [want] = omopt.InferenceSession(EXAMPLE).run(None, {omopt.InferenceSession(EXAMPLE)
                                                       .get_inputs()[0].name: x})
    name = omopt.InferenceSession(EXAMPLE).get_inputs()[0].name
    out = tmp_path / 'out'
    r = py('run', EXAMPLE, '--input', f'{name}={IMAGE}', '--output-dir', str(out))
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out / 'output_0.npy'), want)
    bad = tmp_path / 'bad'
    r = py('run', EXAMPLE, '--input', f'{name}={tmp_path / "missing.npy"}', '--output-dir',
           str(bad))
    assert r.returncode == 1 and not bad.exists()  # a failed run leaves no folder
    assert [f for f in os.listdir(tmp_path) if f.startswith('.omopt-out')] == []
    r = py('info', EXAMPLE)
    assert r.returncode == 0 and f'input {name}: tensor(float)' in r.stdout
    r = py('dot', EXAMPLE, '-o', str(tmp_path / 'g.dot'))
    assert r.returncode == 0 and (tmp_path / 'g.dot').read_text().startswith('digraph')
    r = py('simplify', EXAMPLE, str(tmp_path / 's.onnx'))
    assert r.returncode == 0, r.stderr
    r = py('compare', EXAMPLE, str(tmp_path / 's.onnx'), '--input', f'{name}={IMAGE}')
    assert r.returncode == 0 and ': ok shape' in r.stdout
