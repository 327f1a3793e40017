#!/usr/bin/python3
"""Cases for the ai.onnx.ml numeric ops against ONNX Runtime 1.30 (../shared/oracle), written to
tests/cases/ml/<case>/ in the backend-test layout: Binarizer, Scaler, Normalizer (MAX, L1, L2),
Imputer (float NaN, int64), OneHotEncoder, ArrayFeatureExtractor, FeatureVectorizer,
LinearRegressor and LinearClassifier under each post transform, SVMRegressor and SVMClassifier
(four kernels, probabilities), TreeEnsembleRegressor (SUM, AVERAGE, MIN, MAX, base values),
TreeEnsembleClassifier (multiclass SOFTMAX, binary LOGISTIC) and TreeEnsemble (ml opset 5,
set membership), on random inputs of several types. A case ONNX Runtime refuses is left out
and named.
usage: /usr/bin/python3 tests/gen_cases_ml.py
"""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import OracleError, node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'ml')
rng = np.random.default_rng(35)
ML = 'ai.onnx.ml'


def case(name, op, inputs, attrs, opset=1, n_outputs=1, out_types=None):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    try:
        node_case(d, op, inputs, attrs, opset=opset, n_outputs=n_outputs, domain=ML,
                  out_types=out_types)
        print('wrote', name)
    except OracleError as e:
        print('ONNX Runtime refused %s: %s' % (name, str(e).splitlines()[-1][:200]))


def x(shape, dt=np.float32, lo=-3, hi=3):
    if np.issubdtype(dt, np.integer):
        return rng.integers(lo, hi, shape).astype(dt)
    return rng.uniform(lo, hi, shape).astype(dt)


def forest(n_trees, n_feat, depth, n_out, key, p=0.7):
    """Random complete trees in the legacy layout: (attrs, leaf weights by key), a leaf giving
    each target a weight with probability p."""
    a = {k: [] for k in ('nodes_treeids', 'nodes_nodeids', 'nodes_featureids', 'nodes_modes',
                         'nodes_values', 'nodes_truenodeids', 'nodes_falsenodeids',
                         key + '_treeids', key + '_nodeids', key + '_ids', key + '_weights')}
    modes = ['BRANCH_LEQ', 'BRANCH_LT', 'BRANCH_GTE', 'BRANCH_GT']
    for t in range(n_trees):
        n_int = 2 ** depth - 1
        for i in range(2 ** (depth + 1) - 1):
            a['nodes_treeids'].append(t)
            a['nodes_nodeids'].append(i)
            if i < n_int:
                a['nodes_featureids'].append(int(rng.integers(0, n_feat)))
                a['nodes_modes'].append(modes[int(rng.integers(0, 4))])
                a['nodes_values'].append(float(rng.uniform(-1, 1)))
                a['nodes_truenodeids'].append(2 * i + 1)
                a['nodes_falsenodeids'].append(2 * i + 2)
            else:
                for f in ('nodes_featureids', 'nodes_truenodeids', 'nodes_falsenodeids'):
                    a[f].append(0)
                a['nodes_modes'].append('LEAF')
                a['nodes_values'].append(0.0)
                for k in range(n_out):
                    if rng.uniform() < p:
                        a[key + '_treeids'].append(t)
                        a[key + '_nodeids'].append(i)
                        a[key + '_ids'].append(k)
                        a[key + '_weights'].append(float(rng.uniform(-2, 2)))
    return a


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    # ---- transforms
    for dt in (np.float32, np.float64, np.int64, np.int32):
        case('binarizer_%s' % np.dtype(dt).name, 'Binarizer', {'X': x((3, 4), dt)},
             {'threshold': 0.5})
    case('scaler_per_feature', 'Scaler', {'X': x((4, 3))},
         {'offset': [0.5, -1.0, 2.0], 'scale': [2.0, 0.25, -1.5]}, out_types=[np.float32])
    case('scaler_one_int32', 'Scaler', {'X': x((2, 5), np.int32, -9, 9)},
         {'offset': [1.5], 'scale': [0.5]}, out_types=[np.float32])
    case('scaler_double', 'Scaler', {'X': x((3, 2), np.float64)},
         {'offset': [1.0, 2.0], 'scale': [3.0, 4.0]}, out_types=[np.float32])
    for norm in ('MAX', 'L1', 'L2'):
        xs = x((4, 5))
        xs[1] = 0
        case('normalizer_%s' % norm.lower(), 'Normalizer', {'X': xs}, {'norm': norm},
             out_types=[np.float32])
    xn = x((5, 3))
    xn[rng.uniform(size=xn.shape) < 0.3] = np.nan
    case('imputer_nan', 'Imputer', {'X': xn},
         {'imputed_value_floats': [1.0, -2.0, 3.5], 'replaced_value_float': float('nan')})
    case('imputer_int64', 'Imputer', {'X': x((4, 3), np.int64, -2, 3)},
         {'imputed_value_int64s': [7], 'replaced_value_int64': 0})
    case('one_hot_int64', 'OneHotEncoder', {'X': x((2, 3, 2), np.int64, 0, 6)},
         {'cats_int64s': [4, 0, 2, 9], 'zeros': 1}, out_types=[np.float32])
    case('one_hot_float', 'OneHotEncoder', {'X': x((5,), np.float32, 0, 4)},
         {'cats_int64s': [0, 1, 3]}, out_types=[np.float32])
    case('array_feature_extractor_2d', 'ArrayFeatureExtractor',
         {'X': x((3, 5)), 'Y': np.array([4, 0, 0, 2], np.int64)}, {})
    case('array_feature_extractor_3d_int64', 'ArrayFeatureExtractor',
         {'X': x((2, 3, 4), np.int64, -50, 50), 'Y': np.array([3, 1], np.int64)}, {})
    case('feature_vectorizer', 'FeatureVectorizer',
         {'a': x((3, 2)), 'b': x((3, 4)), 'c': x((3, 1))},
         {'inputdimensions': [2, 3, 2]}, out_types=[np.float32])
    # ---- linear models
    for post in ('NONE', 'SOFTMAX', 'LOGISTIC', 'SOFTMAX_ZERO', 'PROBIT'):
        xin = x((4, 3)) if post != 'PROBIT' else x((4, 3), lo=0, hi=0.3)
        case('linear_regressor_%s' % post.lower(), 'LinearRegressor', {'X': xin},
             {'coefficients': [float(v) for v in rng.uniform(-1, 1, 6)] if post != 'PROBIT'
              else [float(v) for v in rng.uniform(0, 0.5, 6)],
              'intercepts': [0.1, 0.2] if post != 'PROBIT' else [0.05, 0.1],
              'targets': 2, 'post_transform': post}, out_types=[np.float32])
        case('linear_classifier_%s' % post.lower(), 'LinearClassifier', {'X': xin},
             {'coefficients': [float(v) for v in rng.uniform(0, 0.3, 9)],
              'intercepts': [0.01, 0.02, 0.03], 'classlabels_ints': [2, 4, 6],
              'post_transform': post}, n_outputs=2, out_types=[np.int64, np.float32])
    case('linear_classifier_binary_one_row', 'LinearClassifier', {'X': x((5, 2))},
         {'coefficients': [0.7, -1.2], 'intercepts': [0.3], 'classlabels_ints': [0, 1],
          'post_transform': 'LOGISTIC'}, n_outputs=2, out_types=[np.int64, np.float32])
    # ---- SVMs
    sv = [float(v) for v in rng.uniform(-1, 1, 5 * 3)]
    for kern, params in (('LINEAR', [0.0, 0.0, 0.0]), ('POLY', [0.5, 1.0, 3.0]),
                         ('RBF', [0.7, 0.0, 0.0]), ('SIGMOID', [0.3, 0.1, 0.0])):
        case('svm_regressor_%s' % kern.lower(), 'SVMRegressor', {'X': x((4, 3))},
             {'kernel_type': kern, 'kernel_params': params, 'support_vectors': sv,
              'coefficients': [float(v) for v in rng.uniform(-1, 1, 5)], 'rho': [0.25],
              'n_supports': 5}, out_types=[np.float32])
        attrs = {'kernel_type': kern, 'kernel_params': params, 'support_vectors': sv,
                 'vectors_per_class': [2, 1, 2],
                 'coefficients': [float(v) for v in rng.uniform(-1, 1, 10)],
                 'rho': [float(v) for v in rng.uniform(-0.5, 0.5, 3)],
                 'classlabels_ints': [1, 2, 3]}
        case('svm_classifier_%s' % kern.lower(), 'SVMClassifier', {'X': x((6, 3))}, attrs,
             n_outputs=2, out_types=[np.int64, np.float32])
        attrs = dict(attrs, prob_a=[-1.5, -2.0, -0.7], prob_b=[0.1, -0.2, 0.05])
        case('svm_classifier_%s_proba' % kern.lower(), 'SVMClassifier', {'X': x((6, 3))},
             attrs, n_outputs=2, out_types=[np.int64, np.float32])
    case('svm_regressor_one_class', 'SVMRegressor', {'X': x((6, 3))},
         {'kernel_type': 'RBF', 'kernel_params': [0.5, 0.0, 0.0], 'support_vectors': sv,
          'coefficients': [0.3, 0.2, 0.1, 0.3, 0.1], 'rho': [-0.4], 'n_supports': 5,
          'one_class': 1}, out_types=[np.float32])
    # ---- trees
    for agg in ('SUM', 'AVERAGE', 'MIN', 'MAX'):
        # every leaf weighs every target: ONNX Runtime leaves a target no leaf reaches at 0
        # without its base value (docs/ops.md)
        a = forest(3, 4, 3, 2, 'target', 1.0)
        case('tree_regressor_%s' % agg.lower(), 'TreeEnsembleRegressor', {'X': x((8, 4), lo=-1, hi=1)},
             dict(a, n_targets=2, aggregate_function=agg, base_values=[0.5, -0.25]),
             out_types=[np.float32])
    a = forest(4, 3, 3, 3, 'class')
    case('tree_classifier_softmax', 'TreeEnsembleClassifier', {'X': x((8, 3), lo=-1, hi=1)},
         dict(a, classlabels_int64s=[5, 6, 7], post_transform='SOFTMAX',
              base_values=[0.1, 0.2, 0.3]), n_outputs=2, out_types=[np.int64, np.float32])
    a = forest(3, 3, 2, 1, 'class')
    case('tree_classifier_binary_logistic', 'TreeEnsembleClassifier',
         {'X': x((8, 3), lo=-1, hi=1)},
         dict(a, classlabels_int64s=[0, 1], post_transform='LOGISTIC', base_values=[0.3]),
         n_outputs=2, out_types=[np.int64, np.float32])
    a = forest(2, 3, 3, 2, 'target')
    a['nodes_values_as_tensor'] = helper.make_tensor('v', TensorProto.DOUBLE,
                                                     [len(a['nodes_values'])], a['nodes_values'])
    a['target_weights_as_tensor'] = helper.make_tensor('w', TensorProto.DOUBLE,
                                                       [len(a['target_weights'])],
                                                       a['target_weights'])
    del a['nodes_values'], a['target_weights']
    case('tree_regressor_double_tensors', 'TreeEnsembleRegressor',
         {'X': x((6, 3), np.float64, -1, 1)}, dict(a, n_targets=2), opset=3,
         out_types=[np.float32])
    te = dict(nodes_featureids=[0, 1, 0], nodes_truenodeids=[1, 0, 1],
              nodes_trueleafs=[0, 1, 1], nodes_falsenodeids=[2, 1, 2],
              nodes_falseleafs=[0, 1, 1], leaf_targetids=[0, 1, 0], tree_roots=[0],
              nodes_modes=helper.make_tensor('m', TensorProto.UINT8, [3], [1, 3, 6]),
              nodes_splits=helper.make_tensor('s', TensorProto.FLOAT, [3], [0.5, -0.5, 0]),
              leaf_weights=helper.make_tensor('w', TensorProto.FLOAT, [3], [1.5, -2.0, 4.0]),
              membership_values=helper.make_tensor('mv', TensorProto.FLOAT, [3],
                                                   [1.0, 2.0, float('nan')]),
              n_targets=2, post_transform=0)
    xt = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [0.2, 1], [5, -1]], np.float32)
    case('tree_ensemble_member', 'TreeEnsemble', {'X': xt}, te, opset=5)


if __name__ == '__main__':
    main()
