#!/usr/bin/python3
"""Writes the fuzz harnesses' seed corpus: small models made with onnx.helper (no third-party
models) into fuzz/corpus/models, tensor and value files into fuzz/corpus/tensors.

Models: each op family the executor has, older opsets, symbolic dims, subgraphs (If, Loop,
Scan, nested), sequences and optionals (as values and as graph inputs), external data that
names the harnesses' weights file (fuzz.h: FZ_WEIGHTS_NAME, 4096 bytes), sub-byte and string
tensors, and the patterns simplify and optimize rewrite. Inputs are small (the run harness
skips models whose declared inputs are large). Files named repro_* in the corpus folders are
reproducers of fixed findings, kept by hand: this script leaves them alone.

fuzz/models.dict, a libFuzzer dictionary for the model harnesses, lists the op types and
attribute names of onnx.defs (and the com.microsoft ops omopt runs).

Tensor files start with the tensor harness's mode byte (fuzz_tensor.c): 0 .npy, 1 .pb
TensorProto, 2 SequenceProto, 3 OptionalProto.

Run with Debian's python3-onnx: /usr/bin/python3 fuzz/make_corpus.py
"""
import io
import os

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, 'corpus', 'models')
TENSORS = os.path.join(HERE, 'corpus', 'tensors')
WEIGHTS = 'weights.bin'  # fuzz.h FZ_WEIGHTS_NAME
INT4, UINT4 = 22, 21     # TensorProto.DataType numbers newer than this onnx module

rng = np.random.default_rng(10)
models = {}


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def arr(name, a):
    return nh.from_array(np.asarray(a), name)


def f32(*shape):
    return (rng.standard_normal(shape) * 0.5).astype(np.float32)


def model(name, nodes, inputs, outputs, inits=(), opset=17, extra_opsets=(), **kw):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    ops = [h.make_opsetid('', opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    m = h.make_model(g, opset_imports=ops, producer_name='omopt fuzz/make_corpus.py', **kw)
    m.ir_version = 8 if opset >= 15 else 7
    models[name] = m
    return m


def n(op, ins, outs, **attrs):
    return h.make_node(op, ins, outs, name=outs[0] + '_' + op, **attrs)


X = vi('x', TP.FLOAT, ['N', 4])
Y = vi('y', TP.FLOAT, None)

# ---- elementwise -------------------------------------------------------------------------
unary = ['Relu', 'Sigmoid', 'Tanh', 'Abs', 'Neg', 'Exp', 'Softplus', 'Erf', 'Sin', 'Floor',
         'Sign', 'HardSwish', 'Softsign', 'Mish', 'Reciprocal', 'Sqrt', 'Log', 'Round']
nodes, prev = [], 'x'
for i, op in enumerate(unary):
    nodes.append(n(op, [prev], ['u%d' % i]))
    prev = 'u%d' % i
nodes.append(n('LeakyRelu', [prev], ['lr'], alpha=0.2))
nodes.append(n('Clip', ['lr', 'lo', 'hi'], ['y']))
model('ew_unary', nodes, [X], [Y], [arr('lo', np.float32(-1)), arr('hi', np.float32(1))],
      opset=18)

model('ew_binary', [
    n('Add', ['x', 'b'], ['a']), n('Mul', ['a', 'x'], ['m']), n('Sub', ['m', 'b'], ['s']),
    n('Div', ['s', 'b'], ['d']), n('Pow', ['d', 'two'], ['p']), n('Max', ['p', 'x', 'b'], ['mx']),
    n('Min', ['mx', 'b'], ['mn']), n('Greater', ['mn', 'x'], ['g']), n('Not', ['g'], ['ng']),
    n('Equal', ['mn', 'x'], ['e']), n('Or', ['ng', 'e'], ['o']),
    n('Where', ['o', 'mn', 'x'], ['y']),
], [X], [Y], [arr('b', f32(4) + 2), arr('two', np.float32(2))])

model('ew_int', [
    n('Mod', ['i', 'k'], ['m']), n('BitShift', ['u', 'sh'], ['bs'], direction='LEFT'),
    n('BitwiseAnd', ['i', 'k'], ['ba']), n('Add', ['m', 'ba'], ['y']), n('Identity', ['bs'], ['z']),
], [vi('i', TP.INT32, [3, 'N']), vi('u', TP.UINT8, [3])], [vi('y', TP.INT32, None),
   vi('z', TP.UINT8, None)], [arr('k', np.array([3, -2, 5], np.int32).reshape(3, 1)),
                              arr('sh', np.array([1, 2, 3], np.uint8))], opset=18)

model('cast_chain', [
    n('Cast', ['x'], ['c1'], to=TP.INT64), n('Cast', ['c1'], ['c2'], to=TP.FLOAT16),
    n('Cast', ['c2'], ['c3'], to=TP.BFLOAT16), n('Cast', ['c3'], ['c4'], to=TP.DOUBLE),
    n('CastLike', ['c4', 'x'], ['c5']), n('Cast', ['c5'], ['c6'], to=TP.STRING),
    n('Cast', ['c6'], ['y'], to=TP.FLOAT), n('Cast', ['x'], ['z'], to=TP.BOOL),
], [X], [Y, vi('z', TP.BOOL, None)])

# ---- shapes: the torch export pattern, generators ------------------------------------------
model('shape_chain', [
    n('Shape', ['x'], ['sh']), n('Gather', ['sh', 'zero'], ['n0'], axis=0),
    n('Unsqueeze', ['n0', 'ax0'], ['n1']), n('Concat', ['n1', 'tail'], ['tgt'], axis=0),
    n('Reshape', ['x', 'tgt'], ['r']), n('Size', ['r'], ['sz']),
    n('Transpose', ['r'], ['t'], perm=[0, 2, 1]), n('Transpose', ['t'], ['tt'], perm=[0, 2, 1]),
    n('Flatten', ['tt'], ['y'], axis=1), n('Cast', ['sz'], ['z'], to=TP.FLOAT),
], [vi('x', TP.FLOAT, ['N', 2, 6])], [Y, vi('z', TP.FLOAT, None)],
    [arr('zero', np.int64(0)), arr('ax0', np.array([0], np.int64)),
     arr('tail', np.array([3, 4], np.int64))])

model('generate', [
    n('ConstantOfShape', ['shape'], ['c'], value=arr('v', np.array([1.5], np.float32))),
    n('Range', ['start', 'limit', 'delta'], ['r']), n('Cast', ['r'], ['rf'], to=TP.FLOAT),
    n('Add', ['c', 'rf'], ['y']), n('EyeLike', ['c'], ['z'], k=1),
    n('Constant', [], ['k'], value_ints=[1, 2, 3]), n('Identity', ['k'], ['w']),
], [vi('shape', TP.INT64, [2]), vi('start', TP.INT64, []), vi('limit', TP.INT64, []),
    vi('delta', TP.INT64, [])], [Y, vi('z', TP.FLOAT, None), vi('w', TP.INT64, None)])

model('move', [
    n('Split', ['x', 'sp'], ['a', 'b'], axis=1),
    n('Concat', ['b', 'a'], ['c'], axis=1),
    n('Slice', ['c', 'st', 'en', 'ax', 'stp'], ['s']),
    n('Expand', ['s', 'eshape'], ['e']), n('Tile', ['e', 'reps'], ['t']),
    n('Pad', ['t', 'pads', 'pv'], ['p'], mode='reflect'), n('Trilu', ['p'], ['tr'], upper=0),
    n('Unsqueeze', ['tr', 'ax'], ['us']), n('Squeeze', ['us', 'ax'], ['y']),
], [X], [Y], [arr('sp', np.array([1, 3], np.int64)), arr('st', np.array([-1], np.int64)),
              arr('en', np.array([-100], np.int64)), arr('ax', np.array([1], np.int64)),
              arr('stp', np.array([-1], np.int64)), arr('eshape', np.array([2, 1, 1], np.int64)),
              arr('reps', np.array([1, 1, 2], np.int64)),
              arr('pads', np.array([0, 0, 1, 0, 0, 1], np.int64)), arr('pv', np.float32(0))])

# ---- indexing ----------------------------------------------------------------------------
IDX = vi('idx', TP.INT64, [2, 2])
model('index', [
    n('Gather', ['x', 'idx'], ['g'], axis=1), n('GatherElements', ['x', 'ie'], ['ge'], axis=1),
    n('GatherND', ['x', 'ind'], ['gn']), n('ScatterND', ['x', 'ind', 'upd'], ['sn']),
    n('ScatterElements', ['x', 'ie', 'ge'], ['se'], axis=1, reduction='add'),
    n('OneHot', ['idx', 'depth', 'onv'], ['oh'], axis=-1), n('NonZero', ['se'], ['nz']),
    n('TopK', ['sn', 'k'], ['tv', 'ti'], axis=1, largest=1),
    n('Compress', ['x', 'cond'], ['cp'], axis=1), n('ReduceSum', ['g'], ['y'], keepdims=0),
], [X, IDX], [Y, vi('ge', TP.FLOAT, None), vi('oh', TP.FLOAT, None), vi('nz', TP.INT64, None),
              vi('tv', TP.FLOAT, None), vi('ti', TP.INT64, None), vi('cp', TP.FLOAT, None)],
    [arr('ie', np.array([[0, 3], [1, 2]], np.int64)), arr('ind', np.array([[0], [-1]], np.int64)),
     arr('upd', f32(2, 4)), arr('depth', np.int64(5)), arr('onv', np.array([0, 1], np.float32)),
     arr('k', np.array([2], np.int64)), arr('cond', np.array([1, 0, 1], np.bool_))])

model('unique', [
    n('Unique', ['x'], ['u', 'i', 'inv', 'c'], sorted=1, axis=0),
    n('CumSum', ['x', 'ax'], ['cs'], reverse=1), n('ReverseSequence', ['cs', 'lens'], ['y'],
                                                   batch_axis=1, time_axis=0),
], [vi('x', TP.FLOAT, [3, 4])], [vi('u', TP.FLOAT, None), vi('i', TP.INT64, None),
                                  vi('inv', TP.INT64, None), vi('c', TP.INT64, None), Y],
    [arr('ax', np.int64(1)), arr('lens', np.array([1, 2, 3, 3], np.int64))])

# ---- reductions, normalizations ------------------------------------------------------------
R = vi('x', TP.FLOAT, ['N', 3, 4])
model('reduce', [
    n('ReduceSum', ['x', 'axes'], ['rs'], keepdims=1), n('ReduceMax', ['x'], ['rm'], axes=[2]),
    n('ReduceMean', ['x'], ['rme'], axes=[0, 2], keepdims=0),
    n('ReduceLogSumExp', ['x'], ['rl'], axes=[-1]), n('ReduceProd', ['x'], ['rp']),
    n('ArgMax', ['x'], ['am'], axis=1, select_last_index=1), n('Softmax', ['x'], ['sm'], axis=1),
    n('LogSoftmax', ['x'], ['ls']), n('Hardmax', ['x'], ['hm']),
    n('Add', ['rs', 'rm'], ['y']),
], [R], [Y, vi('rme', TP.FLOAT, None), vi('rl', TP.FLOAT, None), vi('rp', TP.FLOAT, None),
         vi('am', TP.INT64, None), vi('sm', TP.FLOAT, None), vi('ls', TP.FLOAT, None),
         vi('hm', TP.FLOAT, None)], [arr('axes', np.array([1], np.int64))])

model('norm', [
    n('LayerNormalization', ['x', 'g', 'b'], ['ln'], axis=-1, epsilon=1e-5),
    n('BatchNormalization', ['ln', 'bs', 'bb', 'bm', 'bv'], ['bn']),
    n('InstanceNormalization', ['bn', 'bs', 'bb'], ['inn']),
    n('LpNormalization', ['inn'], ['lp'], p=2),
    n('MeanVarianceNormalization', ['lp'], ['mvn'], axes=[0, 2]),
    n('LRN', ['mvn'], ['y'], size=3),
], [R], [Y], [arr('g', f32(4)), arr('b', f32(4)), arr('bs', f32(3)), arr('bb', f32(3)),
              arr('bm', f32(3)), arr('bv', np.abs(f32(3)) + 1)])

# ---- linear algebra, convolution, pooling, resize ---------------------------------------
model('linalg', [
    n('MatMul', ['x', 'w'], ['mm']), n('Gemm', ['mm', 'w2', 'c'], ['gm'], transB=1, alpha=0.5),
    n('Einsum', ['gm', 'w3'], ['es'], equation='ij,jk->ik'), n('Relu', ['es'], ['y']),
    n('MatMulInteger', ['qa', 'qb'], ['mi']), n('Det', ['sq'], ['det']),
], [X, vi('qa', TP.UINT8, [2, 3]), vi('sq', TP.FLOAT, [2, 2])],
    [Y, vi('mi', TP.INT32, None), vi('det', TP.FLOAT, None)],
    [arr('w', f32(4, 5)), arr('w2', f32(3, 5)), arr('c', f32(3)), arr('w3', f32(3, 2)),
     arr('qb', np.arange(6, dtype=np.uint8).reshape(3, 2))])

IMG = vi('x', TP.FLOAT, ['N', 2, 5, 5])
model('conv', [
    n('Conv', ['x', 'w', 'b'], ['c'], pads=[1, 1, 1, 1], strides=[1, 1], kernel_shape=[3, 3]),
    n('Conv', ['c', 'wd'], ['dw'], group=4, pads=[0, 1, 0, 1], dilations=[1, 2]),
    n('ConvTranspose', ['dw', 'wt'], ['ct'], strides=[2, 2], output_padding=[1, 1]),
    n('MaxPool', ['ct'], ['mp', 'mi'], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
    n('AveragePool', ['mp'], ['ap'], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
      count_include_pad=0),
    n('LpPool', ['ap'], ['lp'], kernel_shape=[2, 2]), n('GlobalAveragePool', ['lp'], ['y']),
    n('GlobalMaxPool', ['ap'], ['z']),
], [IMG], [Y, vi('z', TP.FLOAT, None), vi('mi', TP.INT64, None)],
    [arr('w', f32(4, 2, 3, 3)), arr('b', f32(4)), arr('wd', f32(4, 1, 1, 3)),
     arr('wt', f32(4, 2, 3, 3))])

model('resize', [
    n('Resize', ['x', '', 'scales'], ['r1'], mode='linear',
      coordinate_transformation_mode='align_corners'),
    n('Resize', ['r1', '', '', 'sizes'], ['r2'], mode='nearest', nearest_mode='floor'),
    n('Resize', ['r2', '', 'scales'], ['r3'], mode='cubic', cubic_coeff_a=-0.5),
    n('DepthToSpace', ['r3'], ['d2s'], blocksize=1), n('SpaceToDepth', ['d2s'], ['y'],
                                                        blocksize=1),
    n('GridSample', ['x', 'grid'], ['gs'], mode='bilinear', padding_mode='border'),
    n('RoiAlign', ['x', 'rois', 'bi'], ['ra'], output_height=2, output_width=2),
], [vi('x', TP.FLOAT, [1, 2, 5, 5])], [Y, vi('gs', TP.FLOAT, None), vi('ra', TP.FLOAT, None)],
    [arr('scales', np.array([1, 1, 1.5, 0.5], np.float32)),
     arr('sizes', np.array([1, 2, 4, 3], np.int64)), arr('grid', f32(1, 3, 3, 2)),
     arr('rois', np.array([[0, 0, 3, 3], [1, 1, 4, 2]], np.float32)),
     arr('bi', np.array([0, 0], np.int64))])

# ---- recurrent -----------------------------------------------------------------------------
SEQ = vi('x', TP.FLOAT, ['T', 1, 3])
model('rnn', [
    n('LSTM', ['x', 'lw', 'lr', 'lb'], ['ly', 'lh', 'lc'], hidden_size=2),
    n('GRU', ['x', 'gw', 'gr'], ['gy', 'gh'], hidden_size=2, direction='bidirectional',
      linear_before_reset=1),
    n('RNN', ['x', 'rw', 'rr'], ['ry'], hidden_size=2, activations=['Relu']),
], [SEQ], [vi('ly', TP.FLOAT, None), vi('lc', TP.FLOAT, None), vi('gy', TP.FLOAT, None),
           vi('ry', TP.FLOAT, None)],
    [arr('lw', f32(1, 8, 3)), arr('lr', f32(1, 8, 2)), arr('lb', f32(1, 16)),
     arr('gw', f32(2, 6, 3)), arr('gr', f32(2, 6, 2)), arr('rw', f32(1, 2, 3)),
     arr('rr', f32(1, 2, 2))])

# ---- control flow: If, Loop, Scan, nesting, outer-scope values --------------------------
then_g = h.make_graph([n('Add', ['x', 'one'], ['t_out'])], 'then', [],
                      [vi('t_out', TP.FLOAT, None)])
else_g = h.make_graph([n('Mul', ['x', 'x'], ['e_out'])], 'else', [],
                      [vi('e_out', TP.FLOAT, None)])
model('if', [n('ReduceSum', ['x'], ['s'], keepdims=0), n('Greater', ['s', 'zf'], ['cond']),
             n('If', ['cond'], ['y'], then_branch=then_g, else_branch=else_g)],
      [X], [Y], [arr('one', np.float32(1)), arr('zf', np.float32(0))])

body = h.make_graph([
    n('Add', ['acc_in', 'x'], ['acc_out']), n('Identity', ['cond_in'], ['cond_out']),
    n('Cast', ['i'], ['i_f'], to=TP.FLOAT), n('Mul', ['acc_out', 'i_f'], ['scan_out']),
], 'body', [vi('i', TP.INT64, []), vi('cond_in', TP.BOOL, []), vi('acc_in', TP.FLOAT, None)],
    [vi('cond_out', TP.BOOL, []), vi('acc_out', TP.FLOAT, None),
     vi('scan_out', TP.FLOAT, None)])
model('loop', [n('Loop', ['trip', 'cond', 'x'], ['y', 'scans'], body=body)],
      [X, vi('trip', TP.INT64, []), vi('cond', TP.BOOL, [])],
      [Y, vi('scans', TP.FLOAT, None)])

sbody = h.make_graph([n('Add', ['s_in', 'xi'], ['s_out']), n('Identity', ['s_out'], ['o'])],
                     'scan_body', [vi('s_in', TP.FLOAT, [4]), vi('xi', TP.FLOAT, [4])],
                     [vi('s_out', TP.FLOAT, [4]), vi('o', TP.FLOAT, [4])])
model('scan', [n('Scan', ['init', 'x'], ['y', 'z'], body=sbody, num_scan_inputs=1)],
      [X], [Y, vi('z', TP.FLOAT, None)], [arr('init', np.zeros(4, np.float32))])

inner_if = h.make_node('If', ['c'], ['io'], name='inner_if', then_branch=then_g,
                       else_branch=else_g)
nbody = h.make_graph([
    n('Greater', ['i', 'k1'], ['c']), inner_if, n('Add', ['acc_in', 'io'], ['acc_out']),
    n('Identity', ['cond_in'], ['cond_out']),
], 'nested_body', [vi('i', TP.INT64, []), vi('cond_in', TP.BOOL, []),
                   vi('acc_in', TP.FLOAT, None)],
    [vi('cond_out', TP.BOOL, []), vi('acc_out', TP.FLOAT, None)])
model('nested', [n('Loop', ['trip', '', 'x'], ['y'], body=nbody)], [X], [Y],
      [arr('trip', np.int64(3)), arr('k1', np.int64(1)), arr('one', np.float32(1))])

# ---- sequences and optionals ---------------------------------------------------------------
model('sequence', [
    n('SequenceConstruct', ['x', 'x'], ['s0']), n('SequenceInsert', ['s0', 'x', 'pos'], ['s1']),
    n('SequenceErase', ['s1', 'pos'], ['s2']), n('SequenceAt', ['s2', 'pos'], ['a']),
    n('SequenceLength', ['s2'], ['len']), n('SplitToSequence', ['x'], ['s3'], axis=1),
    n('ConcatFromSequence', ['s3'], ['c'], axis=1, new_axis=1),
    n('SequenceEmpty', [], ['s4'], dtype=TP.FLOAT), n('SequenceInsert', ['s4', 'a'], ['s5']),
    n('ConcatFromSequence', ['s5'], ['y'], axis=0),
], [X], [Y, vi('len', TP.INT64, None), vi('c', TP.FLOAT, None)],
    [arr('pos', np.int64(-1))])

seq_in = h.make_tensor_sequence_value_info('seq', TP.FLOAT, None)
model('sequence_input', [
    n('SequenceLength', ['seq'], ['len']), n('SequenceInsert', ['seq', 'x'], ['s1']),
    n('ConcatFromSequence', ['s1'], ['y'], axis=0),
], [seq_in, vi('x', TP.FLOAT, [2])], [Y, vi('len', TP.INT64, None)])

opt_t = h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT, [2]))
model('optional', [
    n('OptionalHasElement', ['o'], ['has']), n('OptionalGetElement', ['o'], ['e']),
    n('Optional', ['x'], ['o2']), n('OptionalGetElement', ['o2'], ['y']),
], [h.make_value_info('o', opt_t), vi('x', TP.FLOAT, [2])],
    [vi('has', TP.BOOL, None), vi('e', TP.FLOAT, None), Y], opset=18)

mbody = h.make_graph([n('Relu', ['t'], ['r'])], 'map_body', [vi('t', TP.FLOAT, None)],
                     [vi('r', TP.FLOAT, None)])
model('sequence_map', [
    n('SplitToSequence', ['x', 'sp'], ['s'], axis=0),
    n('SequenceMap', ['s'], ['m'], body=mbody), n('ConcatFromSequence', ['m'], ['y'], axis=0),
], [X], [Y], [arr('sp', np.int64(1))])

# ---- quantization, sub-byte, strings -------------------------------------------------------
model('quant', [
    n('QuantizeLinear', ['x', 'sc', 'zp'], ['q']), n('DequantizeLinear', ['q', 'sc', 'zp'], ['dq']),
    n('DynamicQuantizeLinear', ['dq'], ['dq8', 'dsc', 'dzp']),
    n('QLinearMatMul', ['dq8', 'dsc', 'dzp', 'qw', 'sc', 'zp', 'sc', 'zp'], ['qm']),
    n('DequantizeLinear', ['qm', 'sc', 'zp'], ['y']),
], [X], [Y], [arr('sc', np.float32(0.05)), arr('zp', np.uint8(128)),
              arr('qw', np.arange(12, dtype=np.uint8).reshape(4, 3))])

int4 = TP(name='w4', data_type=INT4, dims=[5], raw_data=bytes([0x21, 0xf3, 0x08]))
uint4 = TP(name='u4', data_type=UINT4, dims=[2, 2], raw_data=bytes([0x9a, 0x31]))
model('subbyte', [
    n('Cast', ['w4'], ['w4f'], to=TP.FLOAT), n('Cast', ['u4'], ['u4f'], to=TP.FLOAT),
    n('Cast', ['x'], ['x4'], to=INT4), n('Cast', ['x4'], ['y'], to=TP.FLOAT),
    n('DequantizeLinear', ['u4', 'sc'], ['dq']),
], [X], [Y, vi('w4f', TP.FLOAT, None), vi('u4f', TP.FLOAT, None), vi('dq', TP.FLOAT, None)],
    [int4, uint4, arr('sc', np.float32(0.5))], opset=21)

model('strings', [
    n('Concat', ['s', 'k'], ['c'], axis=0), n('Cast', ['c'], ['f'], to=TP.FLOAT),
    n('StringConcat', ['c', 'c'], ['sc']), n('Gather', ['c', 'gi'], ['y']),
    n('Equal', ['c', 'c'], ['eq']),
], [vi('s', TP.STRING, ['N'])], [vi('y', TP.STRING, None), vi('f', TP.FLOAT, None),
                                  vi('sc', TP.STRING, None), vi('eq', TP.BOOL, None)],
    [h.make_tensor('k', TP.STRING, [2], [b'1.5', b'-2']), arr('gi', np.array([0, -1]))],
    opset=20)

# the string ops and ImageDecoder (no rng: the other seeds keep their bytes)
model('text_ops', [
    n('StringSplit', ['s'], ['parts', 'cnt'], delimiter=','),
    n('StringSplit', ['s'], ['words', 'wcnt'], maxsplit=2),
    n('StringNormalizer', ['s'], ['norm'], case_change_action='UPPER', stopwords=['a', 'été']),
    n('RegexFullMatch', ['norm'], ['m'], pattern='\\p{Lu}+(,\\w*)*'),
    n('TfIdfVectorizer', ['norm'], ['tf'], mode='TFIDF', min_gram_length=1, max_gram_length=2,
      max_skip_count=1, ngram_counts=[0, 2], ngram_indexes=[0, 1, 2],
      pool_strings=['A', 'B,C', 'A', 'B,C'], weights=[0.5, 1.0, 2.0]),
    n('TfIdfVectorizer', ['cnt'], ['ti'], mode='TF', min_gram_length=1, max_gram_length=3,
      max_skip_count=2, ngram_counts=[0, 2, 4], ngram_indexes=[3, 0, 2, 1],
      pool_int64s=[1, 2, 2, 1, 1, 2, 3]),
], [vi('s', TP.STRING, ['N'])], [vi('parts', TP.STRING, None), vi('words', TP.STRING, None),
                                  vi('m', TP.BOOL, None), vi('tf', TP.FLOAT, None),
                                  vi('ti', TP.FLOAT, None)],
    opset=20)

ppm = np.frombuffer(b'P6\n2 2\n255\n' + bytes(range(0, 240, 20)), dtype=np.uint8)
bmp = np.frombuffer(bytes([66, 77, 62, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0, 2, 0, 0,
                           0, 1, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 8, 0, 0, 0, 19, 11, 0, 0, 19,
                           11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0]),
                    dtype=np.uint8)
model('image_decoder', [
    n('ImageDecoder', ['img'], ['y']),
    n('ImageDecoder', ['ppm'], ['g'], pixel_format='Grayscale'),
    n('ImageDecoder', ['bmp'], ['b'], pixel_format='BGR'),
], [vi('img', TP.UINT8, ['N'])], [vi('y', TP.UINT8, None), vi('g', TP.UINT8, None),
                                   vi('b', TP.UINT8, None)],
    [arr('ppm', ppm), arr('bmp', bmp)], opset=20)

# ---- external data: the harnesses' weights file ------------------------------------------
def external(name, dtype, dims, offset, length):
    t = TP(name=name, data_type=dtype, dims=dims, data_location=TP.EXTERNAL)
    for k, v in (('location', WEIGHTS), ('offset', str(offset)), ('length', str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


model('external', [n('Add', ['x', 'ew'], ['a']), n('Mul', ['a', 'ew2'], ['y'])], [X], [Y],
      [external('ew', TP.FLOAT, [4], 64, 16), external('ew2', TP.FLOAT, [1, 4], 4000, 16)])

# ---- older opsets (attributes that later became inputs) ----------------------------------
model('opset9', [
    n('Upsample', ['x', 'sc'], ['u'], mode='nearest'),
    n('Slice', ['u'], ['s'], starts=[0, 1], ends=[2, 100], axes=[0, 1]),
    n('Pad', ['s'], ['p'], pads=[0, 1, 0, 1], mode='constant', value=0.5),
    n('Scatter', ['p', 'si', 'su'], ['sc2'], axis=1), n('Clip', ['sc2'], ['c'], min=-1.0, max=1.0),
    n('ReduceSum', ['c'], ['r'], axes=[1]), n('Squeeze', ['r'], ['y'], axes=[1]),
    n('Split', ['c'], ['a', 'b'], axis=1, split=[1, 8]),
], [X], [Y, vi('a', TP.FLOAT, None), vi('b', TP.FLOAT, None)],
    [arr('sc', np.array([1, 2], np.float32)), arr('si', np.array([[0, 1]], np.int64)),
     arr('su', np.array([[5, 6]], np.float32))], opset=9)

model('opset11', [
    n('Pad', ['x', 'pads', 'cv'], ['p'], mode='edge'), n('Clip', ['p', 'lo'], ['c']),
    n('TopK', ['c', 'k'], ['tv', 'ti'], sorted=0), n('Resize', ['tv', 'roi', 'sc'], ['y'],
                                                    mode='nearest'),
    n('ScatterND', ['c', 'ind', 'upd'], ['z']),
], [X], [Y, vi('ti', TP.INT64, None), vi('z', TP.FLOAT, None)],
    [arr('pads', np.array([1, 0, 1, 2], np.int64)), arr('cv', np.float32(0)),
     arr('lo', np.float32(-0.5)), arr('k', np.array([3], np.int64)),
     arr('roi', np.zeros(0, np.float32)), arr('sc', np.array([1, 2], np.float32)),
     arr('ind', np.array([[0, 0]], np.int64)), arr('upd', np.array([9], np.float32))], opset=11)

# ---- signal, detection, losses, attention --------------------------------------------------
model('signal', [
    n('HannWindow', ['wl'], ['hw']), n('DFT', ['sig', 'dl'], ['dft'], onesided=1, axis=1),
    n('STFT', ['sig', 'step', 'hw'], ['st']),
    n('MelWeightMatrix', ['nm', 'dl', 'sr', 'lf', 'hf'], ['mw']),
], [vi('sig', TP.FLOAT, [1, 16, 1])], [vi('dft', TP.FLOAT, None), vi('st', TP.FLOAT, None),
                                       vi('mw', TP.FLOAT, None)],
    [arr('wl', np.int64(8)), arr('dl', np.int64(8)), arr('step', np.int64(4)),
     arr('nm', np.int64(3)), arr('sr', np.int64(100)), arr('lf', np.float32(0)),
     arr('hf', np.float32(40))])

model('detect', [
    n('NonMaxSuppression', ['boxes', 'scores', 'mo', 'iou', 'st'], ['sel'],
      center_point_box=0),
    n('Col2Im', ['cols', 'isz', 'bsz'], ['img']),
    n('CenterCropPad', ['img', 'ccs'], ['cc'], axes=[2, 3]),
], [vi('boxes', TP.FLOAT, [1, 3, 4]), vi('scores', TP.FLOAT, [1, 1, 3])],
    [vi('sel', TP.INT64, None), vi('cc', TP.FLOAT, None)],
    [arr('mo', np.int64(2)), arr('iou', np.float32(0.5)), arr('st', np.float32(0)),
     arr('cols', f32(1, 4, 4)), arr('isz', np.array([3, 3], np.int64)),
     arr('bsz', np.array([2, 2], np.int64)), arr('ccs', np.array([2, 4], np.int64))], opset=18)

model('loss', [
    n('SoftmaxCrossEntropyLoss', ['x', 'lab'], ['l1', 'lp'], reduction='mean',
      ignore_index=1),
    n('NegativeLogLikelihoodLoss', ['x', 'lab', 'wt'], ['y'], reduction='sum'),
], [vi('x', TP.FLOAT, [2, 4]), vi('lab', TP.INT64, [2])],
    [vi('l1', TP.FLOAT, None), vi('lp', TP.FLOAT, None), Y], [arr('wt', f32(4))])

model('attention_ms', [
    h.make_node('FusedMatMul', ['q', 'k'], ['qk'], name='fmm', domain='com.microsoft',
                transB=1, alpha=0.5),
    n('Softmax', ['qk'], ['p'], axis=-1), n('MatMul', ['p', 'k'], ['a']),
    h.make_node('Gelu', ['a'], ['g'], name='gelu', domain='com.microsoft'),
    h.make_node('SkipLayerNormalization', ['g', 'q', 'gm', 'bt'], ['y'], name='sln',
                domain='com.microsoft'),
], [vi('q', TP.FLOAT, ['B', 3, 4]), vi('k', TP.FLOAT, ['B', 3, 4])],
    [Y], [arr('gm', f32(4)), arr('bt', f32(4))], extra_opsets=[('com.microsoft', 1)])

# ---- what simplify and optimize rewrite --------------------------------------------------
model('foldable', [
    n('Constant', [], ['c0'], value=arr('cv', f32(4))), n('Add', ['c0', 'c0'], ['c1']),
    n('Identity', ['c1'], ['c2']), n('Add', ['x', 'c2'], ['a']), n('Add', ['x', 'c2'], ['a2']),
    n('Mul', ['a', 'a2'], ['m']), n('Relu', ['x'], ['dead']), n('Identity', ['m'], ['y']),
], [X], [Y])

model('fusions', [
    n('Conv', ['x', 'w'], ['c']), n('BatchNormalization', ['c', 's', 'b', 'mu', 'var'], ['bn']),
    n('Relu', ['bn'], ['r']), n('Reshape', ['r', 'shp'], ['rs']),
    n('MatMul', ['rs', 'mw'], ['mm']), n('Add', ['mm', 'mb'], ['ma']),
    n('ReduceMean', ['ma'], ['mean'], axes=[-1]), n('Sub', ['ma', 'mean'], ['d']),
    n('Mul', ['d', 'd'], ['d2']), n('ReduceMean', ['d2'], ['var2'], axes=[-1]),
    n('Add', ['var2', 'eps'], ['ve']), n('Sqrt', ['ve'], ['sd']), n('Div', ['d', 'sd'], ['nrm']),
    n('Mul', ['nrm', 'gam'], ['ng']), n('Add', ['ng', 'bet'], ['ln']),
    n('Div', ['ln', 'sq2'], ['g1']), n('Erf', ['g1'], ['g2']), n('Add', ['g2', 'onef'], ['g3']),
    n('Mul', ['ln', 'g3'], ['g4']), n('Mul', ['g4', 'half'], ['y']),
], [IMG], [Y], [arr('w', f32(3, 2, 1, 1)), arr('s', f32(3)), arr('b', f32(3)), arr('mu', f32(3)),
                arr('var', np.abs(f32(3)) + 1), arr('shp', np.array([0, 3, -1], np.int64)),
                arr('mw', f32(25, 6)), arr('mb', f32(6)), arr('eps', np.float32(1e-5)),
                arr('gam', f32(6)), arr('bet', f32(6)), arr('sq2', np.float32(1.4142135)),
                arr('onef', np.float32(1)), arr('half', np.float32(0.5))])

# ---- structure: value_info, metadata, docs, an unused sparse initializer; functions -------
m = model('structure', [n('Add', ['x', 'b'], ['a']), n('Identity', ['a'], ['y'])], [X], [Y],
          [arr('b', f32(4))], doc_string='seed')
m.graph.value_info.append(vi('a', TP.FLOAT, ['N', 4]))
m.graph.node[0].doc_string = 'adds'
m.graph.sparse_initializer.append(h.make_sparse_tensor(
    arr('sw', np.array([1.5, -2], np.float32)), arr('sw_i', np.array([1, 3], np.int64)), [4]))
h.set_model_props(m, {'author': 'fuzz', 'note': 'seed'})

m = model('functions', [n('Relu', ['x'], ['r']),
                        h.make_node('Twice', ['r'], ['y'], name='fn', domain='local'),
                        h.make_node('Thing', ['r'], ['z'], name='custom', domain='org.example')],
          [X], [Y, vi('z', TP.FLOAT, None)], extra_opsets=[('local', 1), ('org.example', 1)])
m.functions.append(h.make_function('local', 'Twice', ['t'], ['o'],
                                   [h.make_node('Add', ['t', 't'], ['o'])],
                                   [h.make_opsetid('', 17)]))


# ---- KV-cache attention (after the rest: its own generator leaves their bytes alone) ----------
g34 = np.random.default_rng(34)
ang = g34.uniform(0, 6.3, (16, 4)).astype(np.float32)
model('gqa_ms', [
    h.make_node('GroupQueryAttention', ['q', 'k', 'v', 'pk', 'pv', 'sl', 'tot', 'cs', 'sn'],
                ['y', 'pko', 'pvo'], name='gqa', domain='com.microsoft', num_heads=4,
                kv_num_heads=2, do_rotary=1, local_window_size=3, softcap=2.0),
], [vi('q', TP.FLOAT, ['B', 'S', 32]), vi('k', TP.FLOAT, ['B', 'S', 16]),
    vi('v', TP.FLOAT, ['B', 'S', 16]), vi('pk', TP.FLOAT, ['B', 2, 'P', 8]),
    vi('pv', TP.FLOAT, ['B', 2, 'P', 8]), vi('sl', TP.INT32, ['B']), vi('tot', TP.INT32, [])],
    [Y, vi('pko', TP.FLOAT, None), vi('pvo', TP.FLOAT, None)],
    [arr('cs', np.cos(ang)), arr('sn', np.sin(ang))], extra_opsets=[('com.microsoft', 1)])


# ---- quantized embeddings (after the rest: its own generator leaves their bytes alone) -------
g34q = np.random.default_rng(340)
model('gbq_ms', [
    h.make_node('GatherBlockQuantized', ['tab', 'ids', 'sc', 'zp'], ['y'], name='gbq',
                domain='com.microsoft', bits=4, block_size=16, gather_axis=0, quantize_axis=1),
], [vi('ids', TP.INT64, ['B', 'S'])], [Y],
    [arr('tab', g34q.integers(0, 256, (10, 24)).astype(np.uint8)),
     arr('sc', g34q.uniform(0.01, 0.1, (10, 3)).astype(np.float32)),
     arr('zp', g34q.integers(0, 256, (10, 2)).astype(np.uint8))],
    extra_opsets=[('com.microsoft', 1)])


# ---- BERT-style attention (after the rest: its own generator leaves their bytes alone) -------
g34m = np.random.default_rng(341)
model('mha_ms', [
    h.make_node('MultiHeadAttention', ['q', 'k', 'v', 'mb', 'kpm', '', 'pk', 'pv'],
                ['y', 'pko', 'pvo'], name='mha', domain='com.microsoft', num_heads=2,
                unidirectional=1),
    h.make_node('Attention', ['x', 'w', 'wb', 'kpm'], ['z'], name='attn', domain='com.microsoft',
                num_heads=2, mask_filter_value=-100.0),
], [vi('q', TP.FLOAT, ['B', 'S', 16]), vi('k', TP.FLOAT, ['B', 'S', 16]),
    vi('v', TP.FLOAT, ['B', 'S', 16]), vi('kpm', TP.INT32, ['B', 'T']),
    vi('pk', TP.FLOAT, ['B', 2, 'P', 8]), vi('pv', TP.FLOAT, ['B', 2, 'P', 8]),
    vi('x', TP.FLOAT, ['B', 'T', 12])],
    [Y, vi('pko', TP.FLOAT, None), vi('pvo', TP.FLOAT, None), vi('z', TP.FLOAT, None)],
    [arr('mb', g34m.standard_normal(48).astype(np.float32)),
     arr('w', g34m.standard_normal((12, 48)).astype(np.float32)),
     arr('wb', g34m.standard_normal(48).astype(np.float32))],
    extra_opsets=[('com.microsoft', 1)])


# ---- overridable initializers (issue 35): graph inputs with an initializer of their name (IR 8),
# which the run harness feeds in some runs and leaves at their defaults in others; W * C folds
# only when W is taken for a constant, the Reshape target fed is mostly refused (after the rest:
# its own generator leaves their bytes alone)
g35 = np.random.default_rng(350)
model('overridable', [
    n('Mul', ['w', 'c'], ['wc']), n('MatMul', ['x', 'wc'], ['xw']), n('Add', ['xw', 'b'], ['xwb']),
    n('Reshape', ['xwb', 'shape'], ['y']), n('ReduceMax', ['wc'], ['z'], axes=[0], keepdims=0),
], [vi('x', TP.FLOAT, ['N', 3]), vi('w', TP.FLOAT, [3, 4]), vi('b', TP.FLOAT, [4]),
    vi('shape', TP.INT64, [2])],
    [vi('y', TP.FLOAT, None), vi('z', TP.FLOAT, [4])],
    [arr('c', g35.uniform(0.5, 2, (3, 4)).astype(np.float32)),
     arr('w', g35.standard_normal((3, 4)).astype(np.float32)),
     arr('b', g35.standard_normal(4).astype(np.float32)),
     arr('shape', np.array([-1, 2], np.int64))], opset=13)
models['overridable'].ir_version = 8


# ---- tensor and value files ---------------------------------------------------------------
def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


tensors = {
    'npy_f4': (0, npy(f32(2, 3))),
    'npy_i8_scalar': (0, npy(np.int64(-7))),
    'npy_b1_empty': (0, npy(np.zeros((0, 3), np.bool_))),
    'npy_f2': (0, npy(np.arange(5, dtype=np.float16))),
    'npy_c8': (0, npy(np.array([1 + 2j], np.complex64))),
    'npy_u1_rank4': (0, npy(np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4))),
    'pb_raw_f32': (1, arr('t', f32(3, 2)).SerializeToString()),
    'pb_int64_field': (1, h.make_tensor('t', TP.INT64, [3], [1, -2, 3]).SerializeToString()),
    'pb_float16_field': (1, h.make_tensor('t', TP.FLOAT16, [2], np.array(
        [1, 2], np.float16).view(np.uint16).astype(np.int32).tolist()).SerializeToString()),
    'pb_string': (1, h.make_tensor('t', TP.STRING, [2], [b'ab', b'']).SerializeToString()),
    'pb_bool': (1, arr('t', np.array([True, False])).SerializeToString()),
    'pb_double_field': (1, h.make_tensor('t', TP.DOUBLE, [2], [0.5, -1e300]).SerializeToString()),
    'pb_int4': (1, int4.SerializeToString()),
    'pb_external': (1, external('t', TP.FLOAT, [2, 2], 128, 16).SerializeToString()),
    'pb_npy_named': (0, arr('t', f32(2)).SerializeToString()),
    'seq_tensors': (2, h.make_sequence('s', 1, [arr('a', f32(2)), arr('b', f32(3))])
                    .SerializeToString()),
    'seq_empty': (2, h.make_sequence('s', 1, []).SerializeToString()),
    'opt_tensor': (3, h.make_optional('o', 1, arr('a', f32(2))).SerializeToString()),
    'opt_empty': (3, h.make_optional('o', 0, None).SerializeToString()),
}


def dictionary():
    schemas = [x for x in onnx.defs.get_all_schemas_with_history() if x.domain == '']
    words = {x.name for x in schemas} | {a for x in schemas for a in x.attributes}
    words |= {'FusedMatMul', 'FusedConv', 'Gelu', 'FastGelu', 'BiasGelu', 'QuickGelu',
              'SkipLayerNormalization', 'GroupQueryAttention', 'GatherBlockQuantized',
              'MultiHeadAttention', 'Attention', 'QAttention', 'key_padding_mask',
              'gather_axis', 'quantize_axis', 'com.microsoft', 'ai.onnx', WEIGHTS, 'location',
              'offset', 'length', 'checksum', 'StringSplit', 'RegexFullMatch', 'ImageDecoder',
              'delimiter', 'maxsplit', 'pattern', 'pixel_format', 'BGR', 'Grayscale', 'TFIDF'}
    with open(os.path.join(HERE, 'models.dict'), 'w') as f:
        f.write('# libFuzzer dictionary for the model harnesses: written by make_corpus.py\n')
        for w in sorted(words):
            f.write('"%s"\n' % w)
    return len(words)


def main():
    for d in (MODELS, TENSORS):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if not f.startswith('repro_'):
                os.remove(os.path.join(d, f))
    for name, m in models.items():
        with open(os.path.join(MODELS, name + '.onnx'), 'wb') as f:
            f.write(m.SerializeToString())
    for name, (mode, data) in tensors.items():
        with open(os.path.join(TENSORS, name), 'wb') as f:
            f.write(bytes([mode]) + data)
    print('%d models, %d tensor files, %d dictionary words' % (len(models), len(tensors),
                                                                 dictionary()))


if __name__ == '__main__':
    main()
