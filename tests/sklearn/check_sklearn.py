#!/usr/bin/python3
"""check_sklearn.py — scikit-learn estimators as ai.onnx.ml models (builders.py), run by
`omopt run`, against the estimators' own predict / predict_proba.

    check_sklearn.py OMOPT [--oracle] [--only NAME,...] [--keep DIR]

Each case fits an estimator (or a pipeline) on a fixed-seed dataset, builds the model the way
sklearn-onnx lays it out, runs it with OMOPT on 60 held-out rows and requires: labels equal to
predict's, probabilities (or regression values) within 1e-5 (relative above 1) of
predict_proba's (predict's). The same model after `omopt simplify` must keep every ai.onnx.ml
node and give the same outputs bit for bit. --oracle also runs each model in ONNX Runtime
(../shared/oracle/ort_run.js) and prints its largest difference from scikit-learn (reported,
not required: docs/ops.md says where ONNX Runtime differs). Exit 0 when every case passes,
1 otherwise, 77 (skipped) when numpy, onnx or scikit-learn are missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def cases():
    import numpy as np
    from sklearn import datasets, ensemble, impute, linear_model, pipeline, preprocessing, svm
    from sklearn import tree
    import builders as b

    def cls(n_classes, seed=0):
        x, y = datasets.make_classification(n_samples=260, n_features=6, n_informative=4,
                                            n_redundant=0, n_classes=n_classes,
                                            n_clusters_per_class=1, random_state=seed)
        return x.astype(np.float32), y

    def reg(seed=0):
        x, y = datasets.make_regression(n_samples=260, n_features=6, noise=5.0,
                                        random_state=seed)
        return x.astype(np.float32), y

    def pipe(steps):  # builder for a pipeline: each step's builder in turn
        def build(g, x, est):
            out = x
            for (_, s), f in zip(est.steps, steps):
                out = f(g, out, s)
            return out
        return build

    def with_nan(data):
        x, y = data
        x = x.copy()
        x[np.random.RandomState(1).rand(*x.shape) < 0.15] = np.nan
        return x, y

    def categorical(strings):
        r = np.random.RandomState(3)
        x = np.stack([r.randint(0, 4, 260), r.randint(0, 3, 260) * 5 + 1], axis=1)
        y = x[:, 0] * 2.0 - (x[:, 1] == 6) * 3.0 + r.rand(260)
        if strings:
            x = np.array([[['ab', 'c', 'def', 'g'][a], 'k%d' % b_] for a, b_ in x],
                         dtype=object)
        return x, y

    def labelled(data):
        x, y = data
        return x, np.array(['cat', 'dog', 'emu'])[y]

    lr = linear_model.LogisticRegression
    rfc, rfr = ensemble.RandomForestClassifier, ensemble.RandomForestRegressor
    gbc, gbr = ensemble.GradientBoostingClassifier, ensemble.GradientBoostingRegressor
    dtc, dtr = tree.DecisionTreeClassifier, tree.DecisionTreeRegressor
    Pipe, pp = pipeline.Pipeline, preprocessing

    def dbl(f):  # the tree builders' ml opset 3 form: reals as double tensors
        return lambda g, x, e: f(g, x, e, double=True)

    yield 'decision_tree_classifier', cls(3), dtc(max_depth=6, random_state=0), \
        b.forest_classifier, 'cls'
    yield 'decision_tree_regressor', reg(), dtr(max_depth=6, random_state=0), \
        dbl(b.forest_regressor), 'reg'
    yield 'random_forest_classifier_binary', cls(2), \
        rfc(n_estimators=12, max_depth=5, random_state=0), dbl(b.forest_classifier), 'cls'
    yield 'random_forest_regressor', reg(), rfr(n_estimators=10, max_depth=5, random_state=0), \
        dbl(b.forest_regressor), 'reg'
    yield 'random_forest_regressor_floats', reg(), \
        rfr(n_estimators=10, max_depth=5, random_state=0), b.forest_regressor, 'reg'
    yield 'gradient_boosting_classifier_binary', cls(2), \
        gbc(n_estimators=20, max_depth=3, random_state=0), dbl(b.gbm_classifier), 'cls'
    yield 'gradient_boosting_classifier_multiclass', cls(3), \
        gbc(n_estimators=15, max_depth=3, random_state=0), dbl(b.gbm_classifier), 'cls'
    yield 'gradient_boosting_classifier_floats', cls(3), \
        gbc(n_estimators=15, max_depth=3, random_state=0), b.gbm_classifier, 'cls'
    yield 'gradient_boosting_regressor', reg(), \
        gbr(n_estimators=20, max_depth=3, random_state=0), dbl(b.gbm_regressor), 'reg'
    yield 'linear_regression', reg(), linear_model.LinearRegression(), b.linear_regressor, 'reg'
    yield 'logistic_regression_binary', cls(2), lr(max_iter=500), b.logistic_regression, 'cls'
    yield 'logistic_regression_multiclass', cls(3), lr(max_iter=500), b.logistic_regression, \
        'cls'
    yield 'svc_rbf_probability', cls(3), \
        svm.SVC(kernel='rbf', probability=True, random_state=0), b.svc, 'cls'
    yield 'svc_poly_probability', cls(2), \
        svm.SVC(kernel='poly', degree=3, probability=True, random_state=0), b.svc, 'cls'
    yield 'svc_linear', cls(3), svm.SVC(kernel='linear', random_state=0), b.svc, 'label'
    yield 'svc_sigmoid_binary', cls(2), svm.SVC(kernel='sigmoid', gamma=0.05, random_state=0), \
        b.svc, 'label'
    yield 'svr_rbf', reg(), svm.SVR(kernel='rbf', C=50.0, gamma=0.05), b.svr, 'reg'
    yield 'standard_scaler_logistic', cls(3), \
        Pipe([('s', pp.StandardScaler()), ('m', lr(max_iter=500))]), \
        pipe([b.standard_scaler, b.logistic_regression]), 'cls'
    yield 'minmax_scaler_logistic', cls(2, 4), \
        Pipe([('s', pp.MinMaxScaler()), ('m', lr(max_iter=500))]), \
        pipe([b.minmax_scaler, b.logistic_regression]), 'cls'
    yield 'simple_imputer_tree', with_nan(reg()), \
        Pipe([('i', impute.SimpleImputer()), ('m', dtr(max_depth=5, random_state=0))]), \
        pipe([b.simple_imputer, dbl(b.forest_regressor)]), 'reg'
    yield 'one_hot_encoder_linear', categorical(False), \
        Pipe([('o', pp.OneHotEncoder()), ('m', linear_model.LinearRegression())]), \
        pipe([b.one_hot_encoder, b.linear_regressor]), 'reg'
    yield 'one_hot_encoder_strings', categorical(True), \
        Pipe([('o', pp.OneHotEncoder()), ('m', linear_model.Ridge(alpha=0.1))]), \
        pipe([b.one_hot_encoder, b.linear_regressor]), 'reg'
    yield 'normalizer_logistic', cls(3, 5), \
        Pipe([('n', pp.Normalizer(norm='l2')), ('m', lr(max_iter=500))]), \
        pipe([b.normalizer, b.logistic_regression]), 'cls'
    yield 'string_labels_random_forest', labelled(cls(3)), \
        rfc(n_estimators=8, max_depth=4, random_state=0), b.forest_classifier, 'cls'
    yield 'string_labels_logistic', labelled(cls(3)), lr(max_iter=500), b.logistic_regression, \
        'cls'


def to_array(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, 'rb') as f:
        t.ParseFromString(f.read())
    a = numpy_helper.to_array(t)
    if a.dtype == object:
        a = a.astype(str)
    return a


def run_omopt(omopt, model, x, tmp, tag):
    import numpy as np
    out = os.path.join(tmp, 'out_' + tag)
    xin = os.path.join(tmp, 'x.npy')
    if x.dtype == object:  # strings: a TensorProto file
        from onnx import numpy_helper
        xin = os.path.join(tmp, 'x.pb')
        with open(xin, 'wb') as f:
            f.write(numpy_helper.from_array(x.astype(object), 'x').SerializeToString())
    else:
        np.save(xin, x)
    r = subprocess.run([omopt, 'run', model, '--input', 'x=' + xin, '--output-dir', out],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError('omopt run: ' + r.stderr.strip())
    outs, i = [], 0
    while os.path.exists(os.path.join(out, 'output_%d.pb' % i)):
        outs.append(to_array(os.path.join(out, 'output_%d.pb' % i)))
        i += 1
    return outs


def run_oracle(model, x, tmp):
    import numpy as np
    oracle = os.path.join(HERE, '..', '..', '..', '..', 'shared', 'oracle', 'ort_run.js')
    oracle = os.environ.get('OM_ORACLE', oracle if os.path.exists(oracle) else
                            '/work/shared/oracle/ort_run.js')
    if x.dtype == object:
        return None, 'string input: not fed to the oracle'
    out = os.path.join(tmp, 'ort')
    np.save(os.path.join(tmp, 'x.npy'), x)
    env = dict(os.environ, NODE_PATH=os.path.expanduser('~/.cache/om-oracle/node_modules'))
    r = subprocess.run(['node', oracle, model, out, 'x=' + os.path.join(tmp, 'x.npy')],
                       capture_output=True, text=True, env=env)
    if r.returncode:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'
    outs, i = [], 0
    while os.path.exists(os.path.join(out, '%d.npy' % i)):
        outs.append(np.load(os.path.join(out, '%d.npy' % i), allow_pickle=True))
        i += 1
    return outs, ''


def compare(kind, est, x, outs):
    """'' when outs match the estimator, else what differs."""
    import numpy as np
    if kind == 'reg':
        want = np.asarray(est.predict(x), np.float64).reshape(-1)
        got = outs[0].astype(np.float64).reshape(-1)
        err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
        return '' if err.max() <= 1e-5 else 'values differ by %.3g' % err.max()
    want = est.predict(x)
    got = outs[0]
    if want.dtype.kind in 'OUS':
        want = want.astype(str)
    bad = np.flatnonzero(got != want)
    if len(bad):
        return 'labels differ at %d rows (first %d: %r vs %r)' % (len(bad), bad[0], got[bad[0]],
                                                                   want[bad[0]])
    if kind == 'cls':
        p = est.predict_proba(x)
        if outs[1].shape != p.shape:
            return 'probabilities have shape %s, not %s' % (outs[1].shape, p.shape)
        err = np.abs(outs[1] - p).max()
        if err > 1e-5:
            return 'probabilities differ by %.3g' % err
    return ''


def ml_nodes(path):
    import onnx
    return sorted(n.op_type for n in onnx.load(path).graph.node if n.domain == 'ai.onnx.ml')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('omopt')
    ap.add_argument('--oracle', action='store_true')
    ap.add_argument('--only', default='')
    ap.add_argument('--keep', default='')
    args = ap.parse_args()
    try:
        import numpy as np
        import onnx  # noqa: F401
        import sklearn  # noqa: F401
        from onnx import TensorProto, helper
    except ImportError as e:
        print('skipped: %s' % e)
        return SKIP
    sys.path.insert(0, HERE)
    import builders as b
    only = set(filter(None, args.only.split(',')))
    failed = passed = 0
    for name, (x, y), est, build, kind in cases():
        if only and name not in only:
            continue
        ntr = 200
        est.fit(x[:ntr], y[:ntr])
        xt = x[ntr:]
        g = b.Graph()
        outs = build(g, 'x', est)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        elem = TensorProto.STRING if xt.dtype == object else \
            TensorProto.INT64 if xt.dtype.kind == 'i' else TensorProto.FLOAT
        if elem == TensorProto.INT64:
            xt = xt.astype(np.int64)
        oty = [(outs[0], TensorProto.FLOAT if kind == 'reg' else
                TensorProto.STRING if est.classes_.dtype.kind in 'OUS' else TensorProto.INT64)]
        oty += [(o, TensorProto.FLOAT) for o in outs[1:]]
        m = g.model([helper.make_tensor_value_info('x', elem, [None, xt.shape[1]])], oty)
        tmp = args.keep or tempfile.mkdtemp(prefix='skl_')
        tmp = os.path.join(tmp, name) if args.keep else tmp
        os.makedirs(tmp, exist_ok=True)
        path = os.path.join(tmp, 'model.onnx')
        onnx.save(m, path)
        msg = ''
        try:
            got = run_omopt(args.omopt, path, xt, tmp, 'orig')
            msg = compare(kind, est, xt, got)
            simp = os.path.join(tmp, 'simplified.onnx')
            r = subprocess.run([args.omopt, 'simplify', path, simp], capture_output=True,
                               text=True)
            if not msg and r.returncode:
                msg = 'simplify failed: ' + r.stderr.strip()
            if not msg and ml_nodes(simp) != ml_nodes(path):
                msg = 'simplify changed the ml nodes: %s' % ml_nodes(simp)
            if not msg:
                again = run_omopt(args.omopt, simp, xt, tmp, 'simp')
                if any(a.shape != c.shape or not np.array_equal(a, c) for a, c in zip(got, again)):
                    msg = 'the simplified model gives other outputs'
        except RuntimeError as e:
            msg = str(e)
        note = ''
        if args.oracle:
            ort, why = run_oracle(path, xt, tmp)
            if ort is None:
                note = '  [ONNX Runtime: %s]' % why
            else:
                d = compare(kind, est, xt, ort)
                note = '  [ONNX Runtime: %s]' % (d or 'matches')
        print('%-42s %s%s' % (name, 'FAIL ' + msg if msg else 'ok', note))
        failed += bool(msg)
        passed += not msg
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
