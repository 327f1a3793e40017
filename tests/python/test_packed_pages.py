"""Weights packed once by a product (ops/gemm_packed.c) give back the model file's pages they
were packed from (om_ctx_own_copy): a float model whose Gemm weights lie in external data, run
at one thread on 8 rows, leaves none of the weights' file pages resident (/proc/self/smaps of
the data file's mapping), and gives numpy's product. A weight another node also reads whole
keeps its pages. Where the products do not pack (no AVX-512, and no AVX2 with FMA for omopt's
panels), the weights are read where they are mapped: resident once. Linux only (smaps)."""
import os
import sys

import numpy as np
import pytest

import omopt

onnx = pytest.importorskip('onnx')
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

K = 512  # 1 MiB a weight: packed at one thread from 2 rows (at most 16 MiB)


def write(path, also_read):
    rng = np.random.default_rng(7)
    ws = [(rng.standard_normal((K, K)) * 0.05).astype(np.float32) for _ in range(2)]
    nodes = [h.make_node('Gemm', ['x', 'W0'], ['y0'], transB=1),
             h.make_node('Gemm', ['y0', 'W1'], ['y'], transB=1)]
    outs = [h.make_tensor_value_info('y', T.FLOAT, ['M', K])]
    if also_read:  # W1 also read whole by an element-wise node
        nodes.append(h.make_node('Neg', ['W1'], ['n']))
        outs.append(h.make_tensor_value_info('n', T.FLOAT, [K, K]))
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', T.FLOAT, ['M', K])], outs,
                     [nh.from_array(w, 'W%d' % i) for i, w in enumerate(ws)])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    onnx.save(m, path, save_as_external_data=True, location=os.path.basename(path) + '.bin',
              size_threshold=1024)
    return ws


def mapped_kib(path):
    """Rss of this process's mappings of path, KiB"""
    total, cur = 0, False
    with open('/proc/self/smaps') as f:
        for line in f:
            head = line.split()
            if len(head) >= 5 and '-' in head[0] and ':' in head[3]:
                cur = line.rstrip('\n').endswith(path)
            elif cur and head and head[0] == 'Rss:':
                total += int(head[1])
    return total


def blocks_b():
    """whether the products pack their weights: oneDNN 2.6 keeps B in blocks on AVX-512, and
    omopt's panels take it on AVX2 with FMA (ops/gemm_packed.c); elsewhere om_sgemm reads B
    in place"""
    with open('/proc/cpuinfo') as f:
        flags = set(f.read().split())
    return 'avx512f' in flags or {'avx2', 'fma'} <= flags


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='needs /proc/self/smaps')
@pytest.mark.parametrize('also_read', [False, True])
def test_packed_weights_leave_file_pages(tmp_path, also_read):
    path = str(tmp_path / 'gemm2.onnx')
    ws = write(path, also_read)
    sess = omopt.InferenceSession(path, threads=1)
    x = np.random.default_rng(1).standard_normal((8, K)).astype(np.float32)
    for _ in range(2):
        got = sess.run(None, {'x': x})
    want = (x.astype(np.float64) @ ws[0].T.astype(np.float64)) @ ws[1].T.astype(np.float64)
    assert np.max(np.abs(got[0] - want)) <= 1e-4 * np.max(np.abs(want))
    kib = mapped_kib(path + '.bin')
    if not blocks_b():  # om_sgemm reads the weights where they are mapped: all resident
        assert 2048 <= kib < 2048 + 64, kib
        return
    if also_read:
        # W1 read whole by Neg every run: its 1024 KiB stay; W0's pages went
        assert 1024 <= kib < 2048, kib
        assert np.array_equal(got[1], -ws[1])
    else:
        assert kib < 64, kib  # 2 MiB of weights, all packed
