#!/usr/bin/python3
"""float16 cases for ONNX Runtime's SimplifiedLayerNormalization and com.microsoft
SkipLayerNormalization / SkipSimplifiedLayerNormalization against ONNX Runtime (../shared/oracle),
written to tests/cases/contrib/<case>/ in the backend-test layout: input, skip, gamma, beta and
bias in float16, outputs 0 (and 3, input_skip_bias_sum) in float16, mean and inv_std_var in
float (ContribOperators.md's U); with and without bias, an odd last dim, every output or Y
only. The float32 cases beside them (simplified_ln_*, skip_ln_bias_sum, skip_simplified_ln_*)
came before this script and are not rewritten by it; the skip_*_sh cases broadcast skip [1, S, H]
or [S, H] over the batch (float32 and float16).
usage: /usr/bin/python3 tests/gen_cases_layernorm.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..',
                                                                            'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'contrib')
rng = np.random.default_rng(3416)
F16, F32 = np.float16, np.float32


def rnd(*shape, scale=1.0, shift=0.0):
    return (rng.standard_normal(shape) * scale + shift).astype(F16)


def case(name, op, ins, n_outputs, out_types, domain='com.microsoft', opset=1, **attrs):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    node_case(d, op, ins, attrs, opset=opset, domain=domain, n_outputs=n_outputs,
              out_types=out_types)


# SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)
case('skip_simplified_ln_f16_bias', 'SkipSimplifiedLayerNormalization',
     dict(x=rnd(2, 5, 64, scale=2), s=rnd(2, 5, 64), g=rnd(64, shift=1), b=rnd(64, scale=0.5)),
     4, [F16, F32, F32, F16], epsilon=1e-5)
case('skip_simplified_ln_f16_nobias_odd', 'SkipSimplifiedLayerNormalization',
     dict(x=rnd(3, 37, scale=4), s=rnd(3, 37, scale=3), g=rnd(37)), 1, [F16], epsilon=1e-6)
# SkipLayerNormalization(input, skip, gamma, beta?, bias?)
case('skip_ln_f16_bias_sum', 'SkipLayerNormalization',
     dict(x=rnd(2, 3, 40, scale=2, shift=3), s=rnd(2, 3, 40), g=rnd(40, shift=1),
          be=rnd(40), b=rnd(40, scale=0.5)), 4, [F16, F32, F32, F16], epsilon=1e-5)
case('skip_ln_f16_nobeta', 'SkipLayerNormalization',
     dict(x=rnd(1, 4, 24), s=rnd(1, 4, 24), g=rnd(24)), 1, [F16])
# SimplifiedLayerNormalization(X, scale) (default domain)
case('simplified_ln_f16_last', 'SimplifiedLayerNormalization',
     dict(x=rnd(2, 5, 64, scale=3), g=rnd(64, shift=1)), 2, [F16, F32], domain='', opset=17,
     axis=-1, epsilon=1e-6)
# skip broadcast over the batch: skip [1, S, H] or [S, H] for an input [B, S, H], which ONNX
# Runtime 1.30's CPU kernel accepts (found by a generated decoder, issue 34); float32 and float16
case('skip_simplified_ln_skip_1sh', 'SkipSimplifiedLayerNormalization',
     dict(x=rnd(3, 5, 24, scale=2).astype(F32), s=rnd(1, 5, 24).astype(F32),
          g=rnd(24, shift=1).astype(F32), b=rnd(24, scale=0.5).astype(F32)),
     4, [F32, F32, F32, F32], epsilon=1e-5)
case('skip_simplified_ln_f16_skip_sh', 'SkipSimplifiedLayerNormalization',
     dict(x=rnd(2, 4, 40, scale=2), s=rnd(4, 40), g=rnd(40, shift=1)),
     4, [F16, F32, F32, F16], epsilon=1e-6)
case('skip_ln_skip_sh_bias_sum', 'SkipLayerNormalization',
     dict(x=rnd(2, 3, 40, scale=2, shift=3).astype(F32), s=rnd(3, 40).astype(F32),
          g=rnd(40, shift=1).astype(F32), be=rnd(40).astype(F32), b=rnd(40, scale=0.5).astype(F32)),
     4, [F32, F32, F32, F32], epsilon=1e-5)
