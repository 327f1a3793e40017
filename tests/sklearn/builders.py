"""builders.py — ONNX models of fitted scikit-learn estimators, written with onnx.helper in
the attribute layout sklearn-onnx (skl2onnx) emits for them (its converters for trees, gradient
boosting, linear models, SVMs, scalers, imputer, one-hot encoder and normalizer), since
skl2onnx itself is not installed. Each builder takes the fitted estimator and returns the
list of nodes it adds, reading input `x` (a value name) and writing names it returns."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

ML = 'ai.onnx.ml'


class Graph:
    """Nodes and initializers under construction; fresh(name) makes unique value names."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def fresh(self, hint):
        self.n += 1
        return '%s_%d' % (hint, self.n)

    def node(self, op, ins, nout=1, domain=ML, **attrs):
        outs = [self.fresh(op.lower()) for _ in range(nout)]
        self.nodes.append(helper.make_node(op, ins, outs, domain=domain, **attrs))
        return outs if nout > 1 else outs[0]

    def const(self, arr):
        name = self.fresh('c')
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def model(self, inputs, outputs):
        g = helper.make_graph(self.nodes, 'skl', inputs,
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 15),
                                                helper.make_opsetid(ML, 3)])
        m.ir_version = 8
        return m


# ---- trees (skl2onnx common/tree_ensemble.py) ---------------------------------------------

def _add_tree(a, classifier, tree, tree_id, weight, bias, counts, double):
    for i in range(tree.node_count):
        leaf = not (tree.children_left[i] > i or tree.children_right[i] > i)
        a['nodes_treeids'].append(tree_id)
        a['nodes_nodeids'].append(i)
        a['nodes_featureids'].append(0 if leaf else int(tree.feature[i]))
        a['nodes_modes'].append('LEAF' if leaf else 'BRANCH_LEQ')
        a['nodes_values'].append(0.0 if leaf else float(tree.threshold[i]))
        a['nodes_truenodeids'].append(0 if leaf else int(tree.children_left[i]))
        a['nodes_falsenodeids'].append(0 if leaf else int(tree.children_right[i]))
        a['nodes_missing_value_tracks_true'].append(0)
        a['nodes_hitrates'].append(1.0)
        if not leaf:
            continue
        w = tree.value[i].ravel() * weight
        if counts:
            s = tree.value[i].ravel().sum()
            w = w / (s if s else 1.0)
        if classifier and len(w) == 2:
            w = w[1:]
        pre = 'class' if classifier else 'target'
        for k, v in enumerate(w):
            a[pre + '_treeids'].append(tree_id)
            a[pre + '_nodeids'].append(i)
            a[pre + '_ids'].append(k + bias)
            a[pre + '_weights'].append(float(v))


def _tree_attrs(classifier):
    keys = ['nodes_treeids', 'nodes_nodeids', 'nodes_featureids', 'nodes_modes', 'nodes_values',
            'nodes_truenodeids', 'nodes_falsenodeids', 'nodes_missing_value_tracks_true',
            'nodes_hitrates']
    pre = 'class' if classifier else 'target'
    keys += [pre + s for s in ('_treeids', '_nodeids', '_ids', '_weights')]
    return {k: [] for k in keys}


def _as_tensors(a, double):
    """ml opset 3: the real lists as double tensors (thresholds exactly as scikit-learn's)."""
    if not double:
        return a
    for k in ('nodes_values', 'class_weights', 'target_weights', 'base_values'):
        if k in a:
            a[k + '_as_tensor'] = helper.make_tensor(k, TensorProto.DOUBLE, [len(a[k])], a[k])
            del a[k]
    return a


def _labels(a, classes, ints='classlabels_ints'):
    """Trees name the integer labels classlabels_int64s, the other classifiers
    classlabels_ints."""
    if all(isinstance(c, str) for c in classes):
        a['classlabels_strings'] = [str(c) for c in classes]
    else:
        a[ints] = [int(c) for c in classes]


def forest_classifier(g, x, est, double=False):
    """DecisionTreeClassifier / RandomForestClassifier / ExtraTreesClassifier."""
    trees = getattr(est, 'estimators_', [est])
    a = _tree_attrs(True)
    for t, e in enumerate(trees):
        _add_tree(a, True, e.tree_, t, 1.0 / len(trees), 0, True, double)
    _labels(a, list(est.classes_), 'classlabels_int64s')
    a['post_transform'] = 'NONE'
    return g.node('TreeEnsembleClassifier', [x], 2, **_as_tensors(a, double))


def forest_regressor(g, x, est, double=False):
    trees = getattr(est, 'estimators_', [est])
    a = _tree_attrs(False)
    for t, e in enumerate(trees):
        _add_tree(a, False, e.tree_, t, 1.0 / len(trees), 0, False, double)
    a['n_targets'] = 1
    a['post_transform'] = 'NONE'
    return g.node('TreeEnsembleRegressor', [x], **_as_tensors(a, double))


def gbm_classifier(g, x, est, double=False):
    """GradientBoostingClassifier: class k's trees add learning_rate * leaf to class k (one
    class id for two classes), base_values the initial raw score, LOGISTIC or SOFTMAX."""
    a = _tree_attrs(True)
    k = est.estimators_.shape[1]
    t = 0
    for i in range(est.estimators_.shape[0]):
        for j in range(k):
            _add_tree(a, True, est.estimators_[i, j].tree_, t, est.learning_rate, j, False,
                      double)
            t += 1
    init = est._raw_predict_init(np.zeros((1, est.n_features_in_)))
    a['base_values'] = [float(v) for v in init[0]]
    a['post_transform'] = 'LOGISTIC' if k == 1 else 'SOFTMAX'
    _labels(a, list(est.classes_), 'classlabels_int64s')
    return g.node('TreeEnsembleClassifier', [x], 2, **_as_tensors(a, double))


def gbm_regressor(g, x, est, double=False):
    a = _tree_attrs(False)
    for i in range(est.estimators_.shape[0]):
        _add_tree(a, False, est.estimators_[i, 0].tree_, i, est.learning_rate, 0, False, double)
    a['base_values'] = [float(est._raw_predict_init(np.zeros((1, est.n_features_in_)))[0, 0])]
    a['n_targets'] = 1
    a['post_transform'] = 'NONE'
    return g.node('TreeEnsembleRegressor', [x], **_as_tensors(a, double))


# ---- linear models (skl2onnx linear_classifier.py, linear_regressor.py) -------------------

def linear_regressor(g, x, est):
    coef = np.atleast_2d(est.coef_)
    return g.node('LinearRegressor', [x], coefficients=[float(v) for v in coef.ravel()],
                  intercepts=[float(v) for v in np.atleast_1d(est.intercept_)],
                  targets=coef.shape[0])


def logistic_regression(g, x, est):
    coef = [float(v) for v in est.coef_.ravel()]
    icp = [float(v) for v in est.intercept_]
    k = len(est.classes_)
    if k == 2:
        coef = [-v for v in coef] + coef
        icp = [-v for v in icp] + icp
    a = dict(coefficients=coef, intercepts=icp, multi_class=1 if k > 2 else 0,
             post_transform='LOGISTIC' if k == 2 else 'SOFTMAX')
    _labels(a, list(est.classes_))
    label, prob = g.node('LinearClassifier', [x], 2, **a)
    if k > 2:  # skl2onnx: probabilities made to sum to 1 (multi_class > 0)
        prob = g.node('Normalizer', [prob], norm='L1')
    return label, prob


# ---- SVMs (skl2onnx support_vector_machines.py) -------------------------------------------

def _svm_common(est):
    return dict(kernel_type=est.kernel.upper(),
                kernel_params=[float(est._gamma), float(est.coef0), float(est.degree)],
                support_vectors=[float(v) for v in np.float32(est.support_vectors_).ravel()])


def svc(g, x, est):
    a = _svm_common(est)
    coef, rho = est.dual_coef_.ravel(), est.intercept_
    if len(est.classes_) == 2:
        coef, rho = -coef, -rho
    a['coefficients'] = [float(v) for v in np.float32(coef)]
    a['rho'] = [float(v) for v in np.float32(rho)]
    if len(est.probA_):
        a['prob_a'] = [float(v) for v in np.float32(est.probA_)]
        a['prob_b'] = [float(v) for v in np.float32(est.probB_)]
    a['vectors_per_class'] = [int(v) for v in est.n_support_]
    a['post_transform'] = 'NONE'
    _labels(a, list(est.classes_))
    return g.node('SVMClassifier', [x], 2, **a)


def svr(g, x, est):
    a = _svm_common(est)
    a['coefficients'] = [float(v) for v in np.float32(est.dual_coef_.ravel())]
    a['rho'] = [float(v) for v in np.float32(est.intercept_)]
    a['n_supports'] = len(est.support_)
    a['post_transform'] = 'NONE'
    return g.node('SVMRegressor', [x], **a)


# ---- transforms (skl2onnx scaler.py, imputer_op.py, normaliser.py, one_hot_encoder.py) ----

def standard_scaler(g, x, est):
    return g.node('Scaler', [x], offset=[float(v) for v in est.mean_],
                  scale=[float(1 / v) for v in est.scale_])


def minmax_scaler(g, x, est):
    return g.node('Scaler', [x], offset=[float(v) for v in -est.min_ / est.scale_],
                  scale=[float(v) for v in est.scale_])


def simple_imputer(g, x, est):
    return g.node('Imputer', [x], imputed_value_floats=[float(v) for v in est.statistics_],
                  replaced_value_float=float('nan'))


def normalizer(g, x, est):
    return g.node('Normalizer', [x], norm=est.norm.upper())


def one_hot_encoder(g, x, est):
    """A column at a time: ArrayFeatureExtractor, OneHotEncoder, Reshape to (N, k); the
    columns joined by FeatureVectorizer."""
    outs, dims = [], []
    for i, cats in enumerate(est.categories_):
        col = g.node('ArrayFeatureExtractor', [x, g.const(np.array([i], np.int64))])
        if cats.dtype.kind in 'OUS':
            oh = g.node('OneHotEncoder', [col], cats_strings=[str(c) for c in cats], zeros=1)
        else:
            oh = g.node('OneHotEncoder', [col], cats_int64s=[int(c) for c in cats], zeros=1)
        outs.append(g.node('Reshape', [oh, g.const(np.array([-1, len(cats)], np.int64))],
                           domain=''))
        dims.append(len(cats))
    return g.node('FeatureVectorizer', outs, inputdimensions=dims)
