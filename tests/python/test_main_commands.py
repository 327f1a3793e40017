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


BUILD = os.environ.get('OMOPT_BUILD', os.path.join(SRC, 'build'))
OMOPT = os.path.join(BUILD, 'tools', 'omopt')


def squeeze11(path):
    from onnx import TensorProto as T, helper as h, save
    g = h.make_graph([h.make_node('Squeeze', ['x'], ['y'], axes=[1], name='sq')], 'g',
                     [h.make_tensor_value_info('x', T.FLOAT, ['N', 1, 3])],
                     [h.make_tensor_value_info('y', T.FLOAT, ['N', 3])])
    save(h.make_model(g, opset_imports=[h.make_opsetid('', 11)]), str(path))


def test_simplify_opset(tmp_path):
    """--opset N as `omopt simplify --opset N`: the same bytes, the node converted (Squeeze's
    axes attribute at 11, an input [1] at 13), a refusal naming the node with nothing
    written, an opset outside 7..23 refused with the command's message."""
    import pytest
    onnx = pytest.importorskip('onnx')
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    src, out = tmp_path / 'sq11.onnx', tmp_path / 'sq13.onnx'
    squeeze11(src)
    r = py('simplify', str(src), str(out), '--opset', '13', '--check', '2')
    assert r.returncode == 0, r.stderr
    m = onnx.load(str(out))
    assert [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')] == [13]
    [sq] = [n for n in m.graph.node if n.op_type == 'Squeeze']
    assert len(sq.input) == 2 and not sq.attribute
    assert {i.name: nh.to_array(i) for i in m.graph.initializer}[sq.input[1]].tolist() == [1]
    if os.path.exists(OMOPT):
        c = subprocess.run([OMOPT, 'simplify', str(src), str(tmp_path / 'c13.onnx'), '--opset',
                            '13'], capture_output=True, timeout=120)
        assert c.returncode == 0, c.stderr
        assert (tmp_path / 'c13.onnx').read_bytes() == out.read_bytes()
    g = h.make_graph([h.make_node('Trilu', ['x'], ['y'], name='tri')], 'g',
                     [h.make_tensor_value_info('x', T.STRING, [2, 2])],
                     [h.make_tensor_value_info('y', T.STRING, [2, 2])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 14)]), str(tmp_path / 't.onnx'))
    r = py('simplify', str(tmp_path / 't.onnx'), str(tmp_path / 't13.onnx'), '--opset', '13')
    assert r.returncode == 1 and 'tri' in r.stderr and 'Trilu' in r.stderr, r.stderr
    assert not (tmp_path / 't13.onnx').exists()
    for bad in ('6', '24', 'x'):
        r = py('simplify', str(src), str(tmp_path / 'bad.onnx'), '--opset', bad)
        assert r.returncode == 2 and '--opset needs an opset from 7 to 23' in r.stderr
        assert not (tmp_path / 'bad.onnx').exists()


def help_blocks(text):
    """{flag: its help text, whitespace collapsed} from a --help listing laid out as
    `omopt simplify --help`'s (flags at column 2, text at column 22 or 24, continuation
    lines indented to it)."""
    import re
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r'^  (-\S.*?)(?:\s{2,}(\S.*))?$', line)
        if m:
            cur = [m.group(2)] if m.group(2) else []
            for f in re.findall(r'--[\w-]+', m.group(1)):
                blocks[f] = cur
        elif cur is not None and line.startswith(' ' * 8) and line.strip():
            cur.append(line.strip())
        else:
            cur = None
    # argparse wraps at hyphens too ("--save-" / "as-external-data"): such a line joins the next
    join = lambda t: ''.join(x + ('' if x.endswith('-') else ' ') for x in t)  # noqa: E731
    return {f: ' '.join(join(t).split()) for f, t in blocks.items()}


def test_simplify_help_matches_the_command():
    """Every flag of `python -m omopt simplify` that has a help text has the command's (the
    flags that mean the same in both; --opset among them)."""
    import pytest
    if not os.path.exists(OMOPT):
        pytest.skip(f'{OMOPT} is not built')
    c = subprocess.run([OMOPT, 'simplify', '--help'], capture_output=True, text=True,
                       timeout=60)
    want = help_blocks(c.stdout + c.stderr)
    r = py('simplify', '--help')
    assert r.returncode == 0, r.stderr
    got = {f: t for f, t in help_blocks(r.stdout).items() if t}
    assert '--opset' in got and len(got) >= 14
    for flag, text in got.items():
        if flag == '--help':
            continue
        assert text == want.get(flag), flag
