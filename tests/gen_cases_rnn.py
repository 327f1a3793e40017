#!/usr/bin/python3
"""Differential cases for RNN, GRU and LSTM against ONNX Runtime (../shared/oracle), written to
tests/cases/rnn/<case>/ in the backend-test layout. Covers what the ONNX node tests do not:
bidirectional, sequence_lens, layout 1, linear_before_reset, clip, input_forget, peepholes,
activation functions with alpha/beta, omitted optional inputs and outputs.
usage: /usr/bin/python3 tests/gen_cases_rnn.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'rnn')
rng = np.random.default_rng(11)
GATES = {'RNN': 1, 'GRU': 3, 'LSTM': 4}


def case(name, op, seq=3, batch=2, inp=4, hidden=5, direction='forward', layout=0, lens=None,
         bias=True, init_h=True, init_c=True, peep=False, n_outputs=None, **attrs):
    nd = 2 if direction == 'bidirectional' else 1
    g = GATES[op]
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)
    x = f(batch, seq, inp) if layout else f(seq, batch, inp)
    hs = (batch, nd, hidden) if layout else (nd, batch, hidden)
    ins = {'X': x, 'W': f(nd, g * hidden, inp), 'R': f(nd, g * hidden, hidden),
           'B': f(nd, 2 * g * hidden) if bias else None,
           'sequence_lens': np.array(lens, np.int32) if lens is not None else None,
           'initial_h': f(*hs) if init_h else None}
    if op == 'LSTM':
        ins['initial_c'] = f(*hs) if init_c else None
        ins['P'] = f(nd, 3 * hidden) if peep else None
    while ins and list(ins.values())[-1] is None:
        ins.popitem()
    attrs = dict(attrs, hidden_size=hidden, direction=direction)
    nout = n_outputs or (3 if op == 'LSTM' else 2)
    if not layout:
        node_case(os.path.join(OUT, name), op, ins, attrs, opset=14, n_outputs=nout,
                  out_types=[np.float32] * nout)
        return
    # ONNX Runtime refuses layout 1: run the time-major equivalent and transpose
    tm = dict(ins, X=x.transpose(1, 0, 2))
    for k in ('initial_h', 'initial_c'):
        if tm.get(k) is not None:
            tm[k] = tm[k].transpose(1, 0, 2)
    tmp = os.path.join(OUT, name + '.tmp')
    outs = node_case(tmp, op, tm, attrs, opset=14, n_outputs=nout, out_types=[np.float32] * nout)
    shutil.rmtree(tmp)
    outs = [outs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outs[1:]]
    write_case(os.path.join(OUT, name), op, ins, dict(attrs, layout=1), outs)


def write_case(d, op, ins, attrs, outs):
    names = [k if v is not None else '' for k, v in ins.items()]
    onames = ['y%d' % i for i in range(len(outs))]
    g = helper.make_graph(
        [helper.make_node(op, names, onames, **attrs)], 'case_' + op,
        [helper.make_tensor_value_info(k, onnx.TensorProto.FLOAT if v.dtype == np.float32
                                       else onnx.TensorProto.INT32, v.shape)
         for k, v in ins.items() if v is not None],
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in onames])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 14)])
    m.ir_version = 8
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    feeds = [v for v in ins.values() if v is not None]
    for i, v in enumerate(feeds):
        open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'wb').write(
            numpy_helper.from_array(v).SerializeToString())
    for i, v in enumerate(outs):
        open(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % i), 'wb').write(
            numpy_helper.from_array(np.ascontiguousarray(v)).SerializeToString())
    open(os.path.join(d, 'NOTE.txt'), 'w').write(
        'ONNX Runtime refuses layout=1 for RNN/GRU/LSTM. Expected outputs are ONNX Runtime\'s '
        'for the same inputs in layout 0 (time-major), transposed to layout 1.\n')


if __name__ == '__main__':
    shutil.rmtree(OUT, ignore_errors=True)
    for op in ('RNN', 'GRU', 'LSTM'):
        o = op.lower()
        case(o + '_bidir_lens', op, direction='bidirectional', lens=[3, 1])
        case(o + '_reverse_layout1', op, direction='reverse', layout=1, lens=[2, 3])
        case(o + '_nobias_noinit', op, bias=False, init_h=False, init_c=False, n_outputs=1)
        case(o + '_clip', op, clip=0.3, seq=4, batch=1)
        case(o + '_zero_len', op, lens=[0, 3], direction='bidirectional')
    case('rnn_relu', 'RNN', activations=['Relu'])
    case('rnn_affine_bidir', 'RNN', direction='bidirectional', activations=['Affine', 'ScaledTanh'],
         activation_alpha=[0.7, 1.5], activation_beta=[0.1, 0.6])
    case('gru_linear_before_reset', 'GRU', linear_before_reset=1, direction='bidirectional',
         lens=[3, 2])
    case('gru_hardsigmoid', 'GRU', activations=['HardSigmoid', 'Softsign'],
         activation_alpha=[0.3], activation_beta=[0.4])
    case('lstm_peep_input_forget', 'LSTM', peep=True, input_forget=1)
    case('lstm_peep_bidir_layout1', 'LSTM', peep=True, direction='bidirectional', layout=1,
         lens=[1, 3])
    case('lstm_activations', 'LSTM', activations=['HardSigmoid', 'Elu', 'Softplus'],
         activation_alpha=[0.25, 0.8], activation_beta=[0.45])
    print('wrote', len(os.listdir(OUT)), 'cases to', OUT)
