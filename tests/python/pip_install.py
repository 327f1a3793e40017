"""pip_install.py — `pip install .` in a fresh `python3 -m venv --system-site-packages` in a
temporary folder, offline (--no-index: nothing downloaded), then `import omopt` there and a
model run by omopt.onnxruntime, giving y = x * 2 + 1. Not in the quick suite: the wheel build
compiles the whole library (minutes). Exit 77 (meson's skip), saying why, when venv,
meson-python or onnx is missing. Usage: pip_install.py SOURCE_DIR."""
import os
import subprocess
import sys
import tempfile


def skip(why):
    print(f'skipped: {why}')
    sys.exit(77)


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), '..', '..'))
    py = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else sys.executable
    for mod, pkg in (('venv', 'python3-venv'), ('ensurepip', 'python3-venv'),
                     ('mesonpy', 'python3-mesonpy'), ('numpy', 'python3-numpy'),
                     ('onnx', 'python3-onnx')):
        if subprocess.run([py, '-c', f'import {mod}'], capture_output=True).returncode:
            skip(f'{py} cannot import {mod} (apt-get install {pkg})')
    with tempfile.TemporaryDirectory(prefix='omopt-pip-') as d:
        env_dir = os.path.join(d, 'env')
        subprocess.run([py, '-m', 'venv', '--system-site-packages', env_dir], check=True)
        vpy = os.path.join(env_dir, 'bin', 'python')
        env = {k: v for k, v in os.environ.items()
               if k not in ('PYTHONPATH', 'OMOPT_LIBRARY', 'PIP_INDEX_URL')}
        r = subprocess.run([vpy, '-m', 'pip', 'install', '--no-index', src], env=env,
                           cwd=d, capture_output=True, text=True)
        if r.returncode:
            print(r.stdout[-4000:], r.stderr[-4000:])
            print('FAIL: pip install . failed')
            return 1
        script = '''
import os, numpy as np, omopt, omopt.onnxruntime as ort
from onnx import helper as h, numpy_helper
assert omopt.__file__.startswith(os.environ['VENV']), omopt.__file__
g = h.make_graph([h.make_node('Mul', ['x', 'two'], ['t']), h.make_node('Add', ['t', 'one'], ['y'])],
                 'g', [h.make_tensor_value_info('x', 1, [3])], [h.make_tensor_value_info('y', 1, [3])],
                 [numpy_helper.from_array(np.array(2, np.float32), 'two'),
                  numpy_helper.from_array(np.array(1, np.float32), 'one')])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])
[y] = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider']).run(
    None, {'x': np.array([0, 1, 2], np.float32)})
assert y.tolist() == [1, 3, 5], y
print('ok', omopt.__version__, omopt.__file__)
'''
        r = subprocess.run([vpy, '-c', script], env={**env, 'VENV': env_dir}, cwd=d,
                           capture_output=True, text=True)
        print(r.stdout, r.stderr)
        return r.returncode


if __name__ == '__main__':
    sys.exit(main())
