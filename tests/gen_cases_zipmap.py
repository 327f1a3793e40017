#!/usr/bin/python3
"""Cases for ZipMap after a scikit-learn classifier (issue 35), in tests/cases/ml_zipmap/<case>/
(ONNX's backend-test layout: model.onnx, test_data_set_0/input_0.pb, output_0.pb the labels,
output_1.pb the probabilities as a SequenceProto of MapProto, one map per row).

    logreg_int, logreg_str  LogisticRegression (3 classes) as skl2onnx lays it out:
                            LinearClassifier (SOFTMAX), Normalizer (L1), ZipMap; int64 and
                            string class labels
    forest_int, forest_str  RandomForestClassifier (3 trees): TreeEnsembleClassifier, ZipMap

Where the values come from: ONNX Runtime 1.30 (../shared/oracle, onnxruntime-node) does not
return a sequence of maps ("Non tensor type is temporarily not supported"), so it runs the
same model with ZipMap's input as the output instead of ZipMap's output; the expected maps are
its probabilities under the class labels (ZipMap only pairs them), its labels the expected
labels. The script checks them against scikit-learn itself first: labels equal to predict's,
probabilities within 1e-5 of predict_proba's (it stops otherwise). Without the oracle it
stops: the cases are regenerated only where ONNX Runtime runs.

    /usr/bin/python3 tests/gen_cases_zipmap.py    # deterministic (fixed seeds)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'sklearn'))
sys.path.insert(0, HERE)
import builders as b  # noqa: E402
from gen_cases_ml_maps import map_type, seq_of_maps  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'ml_zipmap')
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared'))
ORT_STRINGS = os.path.join(HERE, 'ort_strings.js')
ROWS = 7


def data(labels):
    from sklearn import datasets
    x, y = datasets.make_classification(n_samples=200, n_features=5, n_informative=4,
                                        n_redundant=0, n_classes=3, n_clusters_per_class=1,
                                        random_state=35)
    y = np.array(labels, dtype=object)[y] if isinstance(labels[0], str) else np.array(labels)[y]
    return x.astype(np.float32), y


def model(est, kind, strings, zipmap=True):
    """The classifier's graph, then ZipMap (zipmap) or ZipMap's input as the second output."""
    g = b.Graph()
    if kind == 'logreg':
        label, prob = b.logistic_regression(g, 'X', est)
    else:
        label, prob = b.forest_classifier(g, 'X', est)
    classes = list(est.classes_)
    out_t = h.make_tensor_type_proto(T.STRING if strings else T.INT64, None)
    outs = [h.make_value_info(label, out_t)]
    if zipmap:
        key = T.STRING if strings else T.INT64
        attrs = ({'classlabels_strings': [str(c) for c in classes]} if strings else
                 {'classlabels_int64s': [int(c) for c in classes]})
        probs = g.node('ZipMap', [prob], name='zipmap', **attrs)
        outs.append(h.make_value_info(probs, h.make_sequence_type_proto(
            map_type(key, h.make_tensor_type_proto(T.FLOAT, None)))))
    else:
        outs.append(h.make_value_info(prob, h.make_tensor_type_proto(T.FLOAT, None)))
    graph = h.make_graph(g.nodes, 'zipmap_' + kind, [h.make_tensor_value_info('X', T.FLOAT,
                                                                              ['N', 5])],
                         outs, g.inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid('', 15), h.make_opsetid(b.ML, 3)])
    m.ir_version = 8
    return m


def ort(m, x):
    """ONNX Runtime's outputs of m on X = x (tests/ort_strings.js: string tensors too)."""
    with tempfile.TemporaryDirectory() as d:
        onnx.save(m, os.path.join(d, 'm.onnx'))
        with open(os.path.join(d, 'in.json'), 'w') as f:
            json.dump({'X': {'type': 'float32', 'dims': list(x.shape),
                             'data': [float(v) for v in x.ravel()]}}, f)
        env = dict(os.environ, OM_ORACLE_DIR=os.environ.get('OM_ORACLE_DIR', os.path.join(
            os.path.expanduser('~'), '.cache', 'om-oracle')))
        subprocess.run(['node', ORT_STRINGS, os.path.join(d, 'm.onnx'),
                        os.path.join(d, 'in.json'), os.path.join(d, 'out.json')],
                       check=True, env=env, timeout=120)
        with open(os.path.join(d, 'out.json')) as f:
            return json.load(f)


def main():
    from sklearn import ensemble, linear_model
    if not os.path.isdir(os.path.join(SHARED, 'oracle')):
        sys.exit(f'no oracle at {SHARED}/oracle: the cases are made from ONNX Runtime')
    probe = ort(model(linear_model.LogisticRegression(max_iter=500).fit(*data([0, 1, 2])),
                      'logreg', False), np.zeros((1, 5), np.float32))
    print('ONNX Runtime on the model with ZipMap:', probe.get('error', 'ran'))
    for kind in ('logreg', 'forest'):
        for strings in (False, True):
            labels = ['cat', 'dog', 'emu'] if strings else [0, 1, 2]
            x, y = data(labels)
            est = (linear_model.LogisticRegression(max_iter=500) if kind == 'logreg' else
                   ensemble.RandomForestClassifier(n_estimators=3, max_depth=4,
                                                   random_state=0))
            est.fit(x[ROWS:], y[ROWS:])
            xt = x[:ROWS]
            res = ort(model(est, kind, strings, zipmap=False), xt)
            if isinstance(res, dict):
                sys.exit(f'ONNX Runtime refused the {kind} model: {res["error"]}')
            got_label = np.array(res[0]['data'], dtype=object if strings else np.int64)
            got_prob = np.array(res[1]['data'], np.float32).reshape(ROWS, len(est.classes_))
            assert list(got_label) == list(est.predict(xt)), (kind, got_label)
            assert np.allclose(got_prob, est.predict_proba(xt), rtol=0, atol=1e-5), kind
            name = f'{kind}_{"str" if strings else "int"}'
            d = os.path.join(OUT, name)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.join(d, 'test_data_set_0'))
            onnx.save(model(est, kind, strings), os.path.join(d, 'model.onnx'))
            maps = [dict(zip([str(c) if strings else int(c) for c in est.classes_],
                             [float(p) for p in row])) for row in got_prob]
            protos = [('input_0', nh.from_array(xt, 'X')),
                      ('output_0', nh.from_array(got_label if not strings else
                                                 np.array(got_label, dtype=object))),
                      ('output_1', seq_of_maps(maps, T.STRING if strings else T.INT64,
                                               np.float32))]
            for fname, p in protos:
                with open(os.path.join(d, 'test_data_set_0', fname + '.pb'), 'wb') as f:
                    f.write(p.SerializeToString())
            print(name, 'labels', list(got_label))


if __name__ == '__main__':
    main()
