#!/usr/bin/python3
"""Oracle cases for the string ops: StringSplit, StringNormalizer, RegexFullMatch and
TfIdfVectorizer, in the ONNX backend-test layout under tests/cases/text/<case>/ (the
`conformance / cases` test runs them).

Expected outputs are ONNX Runtime's (../shared/oracle's install, run by tests/ort_strings.js
because ort_run.js's .npy files cannot carry strings). Cases stay within what omopt and ONNX
Runtime define alike (docs/ops.md, "Strings and images"): StringSplit's whitespace mode sees
only ' ' as whitespace and no "" element meets a delimiter; StringNormalizer names locale
C.UTF-8 or C (ONNX Runtime refuses locales its machine lacks, en_US.UTF-8 included here).

    /usr/bin/python3 tests/gen_cases_text.py        # regenerate (deterministic)
"""
import json, os, shutil, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'cases', 'text')
JS = os.path.join(ROOT, 'tests', 'ort_strings.js')
rng = np.random.default_rng(20261206)
NP = {'string': object, 'int64': np.int64, 'int32': np.int32, 'float32': np.float32,
      'bool': np.bool_}
ONNXT = {'string': TensorProto.STRING, 'int64': TensorProto.INT64, 'int32': TensorProto.INT32}


def ort(model_path, feeds):
    with tempfile.TemporaryDirectory() as d:
        spec = {}
        for name, (typ, arr) in feeds.items():
            data = arr.ravel().tolist()
            if typ == 'int64':
                data = [str(v) for v in data]
            spec[name] = {'type': typ, 'dims': list(arr.shape), 'data': data}
        json.dump(spec, open(os.path.join(d, 'in.json'), 'w'))
        p = subprocess.run(['node', JS, model_path, os.path.join(d, 'in.json'),
                            os.path.join(d, 'out.json')], capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(p.stderr)
        return json.load(open(os.path.join(d, 'out.json')))


def case(name, op, x, xtype, attrs, opset, out_types):
    """x: a numpy array (object of str for strings); out_types: ONNX types of the outputs."""
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    outs = ['y%d' % i for i in range(len(out_types))]
    node = helper.make_node(op, ['x'], outs, **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info('x', ONNXT[xtype], None)],
                          [helper.make_tensor_value_info(o, t, None)
                           for o, t in zip(outs, out_types)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    path = os.path.join(d, 'model.onnx')
    onnx.save(m, path)
    res = ort(path, {'x': (xtype, x)})
    if isinstance(res, dict):
        shutil.rmtree(d)
        print('%s: ONNX Runtime refused: %s' % (name, res['error'][:600]))
        return False
    ds = os.path.join(d, 'test_data_set_0')

    def write(fname, tname, typ, dims, data):
        if typ == 'string':
            arr = np.array([s.encode('utf-8') for s in data], dtype=object).reshape(dims)
        else:
            arr = np.array([int(v) if typ in ('int64', 'int32') else v for v in data],
                           dtype=NP[typ]).reshape(dims)
        t = numpy_helper.from_array(arr, tname)
        open(os.path.join(ds, fname), 'wb').write(t.SerializeToString())

    xd = [s for s in x.ravel().tolist()] if xtype == 'string' else x.ravel().tolist()
    write('input_0.pb', 'x', xtype, list(x.shape), xd)
    for i, r in enumerate(res):
        write('output_%d.pb' % i, r['name'], r['type'], r['dims'], r['data'])
    return True


WORDS = ['a', 'b', 'hello', 'world', 'été', 'straße', 'ΣΣΣ', 'Σσς', 'Ⱥx', 'ⱥ', '日本語', 'ǅ',
         'İ', 'Mon', 'monday', 'MONDAY', 'x.y', 'a,b', '', '🙂', 'Ünïcödé']


def words(n):
    return [WORDS[i] for i in rng.integers(0, len(WORDS), n)]


def joined(n, seps):
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 5))
        parts = words(k)
        s = parts[0]
        for p in parts[1:]:
            s += seps[int(rng.integers(0, len(seps)))] + p
        out.append(s)
    return out


def split_cases():
    n = 0
    S, I = TensorProto.STRING, TensorProto.INT64
    for delim, seps in [(',', [',', ',,']), ('-', ['-', '--', '-x-']), ('::', ['::', ':::']),
                        ('é', ['é', 'éé']), ('ab', ['ab', 'aab'])]:
        for maxsplit in [None, 0, 1, 2, -1]:
            for shape in [(5,), (2, 3), (1, 2, 2)]:
                vals = [s if s else 'q' for s in joined(int(np.prod(shape)), seps)]
                x = np.array(vals, dtype=object).reshape(shape)
                attrs = {'delimiter': delim}
                if maxsplit is not None:
                    attrs['maxsplit'] = maxsplit
                n += case('split_%02d' % n, 'StringSplit', x, 'string', attrs, 20, [S, I])
    for maxsplit in [None, 0, 1, 3]:
        for shape in [(4,), (2, 2), ()]:
            cnt = int(np.prod(shape))
            vals = [' ' * int(rng.integers(0, 3)) + s + ' ' * int(rng.integers(0, 3))
                    for s in joined(cnt, [' ', '  ', '   '])]
            x = np.array(vals, dtype=object).reshape(shape)
            attrs = {} if maxsplit is None else {'maxsplit': maxsplit}
            if n % 2:
                attrs['delimiter'] = ''
            n += case('split_%02d' % n, 'StringSplit', x, 'string', attrs, 20, [S, I])
    return n


def normalizer_cases():
    n = 0
    S = TensorProto.STRING
    for action in [None, 'NONE', 'LOWER', 'UPPER']:
        for sens in [None, 0, 1]:
            for stops in [None, ['monday', 'été', 'ΣΣΣ'], ['MONDAY', 'Straße', 'ⱥ', 'ǆ'], WORDS]:
                for two in [False, True]:
                    for loc in ['C.UTF-8', 'C']:
                        if loc == 'C' and rng.random() < 0.7:
                            continue
                        vals = [w if w else 'z' for w in words(6)]
                        x = np.array(vals, dtype=object)
                        if two:
                            x = x.reshape(1, -1)
                        attrs = {'locale': loc}
                        if action:
                            attrs['case_change_action'] = action
                        if sens is not None:
                            attrs['is_case_sensitive'] = sens
                        if stops:
                            attrs['stopwords'] = stops
                        n += case('normalizer_%03d' % n, 'StringNormalizer', x, 'string', attrs,
                                  10, [S])
    return n


def regex_cases():
    n = 0
    B = TensorProto.BOOL
    pats = ['a', '.*', '.', '..', '\\p{Lu}.*', '\\p{L}+', '[a-z]+', '(?i)monday', 'h.*o',
            '[^,]*,[^,]*', '\\w+', '\\d*', '', '(é|ß)+|straße', 'x\\.y', '^Mon$', 'ΣΣ?Σ',
            '(a|b)*', '\\S+', '[[:alpha:]]+']
    for p in pats:
        for shape in [(6,), (2, 3)]:
            x = np.array(words(int(np.prod(shape))), dtype=object).reshape(shape)
            n += case('regex_%02d' % n, 'RegexFullMatch', x, 'string', {'pattern': p}, 20, [B])
    return n


def tfidf_cases():
    n = 0
    F = TensorProto.FLOAT
    for k in range(40):
        strings = k % 3 == 0
        vocab = 6
        max_n = int(rng.integers(1, 4))
        min_n = int(rng.integers(1, max_n + 1))
        skip = int(rng.integers(0, 4))
        pool, counts = [], []
        for size in range(1, max_n + 1 + int(rng.integers(0, 2))):
            counts.append(len(pool))
            for _ in range(int(rng.integers(1, 5))):
                pool.extend(int(v) for v in rng.integers(0, vocab, size))
        ngrams = sum(max(0, (
            (counts[i + 1] if i + 1 < len(counts) else len(pool)) - counts[i]) // (i + 1))
            for i in range(len(counts)))
        idx = rng.permutation(ngrams).tolist()
        mode = ['TF', 'IDF', 'TFIDF'][k % 3 if k < 30 else int(rng.integers(0, 3))]
        attrs = {'mode': mode, 'min_gram_length': min_n, 'max_gram_length': max_n,
                 'max_skip_count': skip, 'ngram_counts': counts, 'ngram_indexes': idx}
        if strings:
            attrs['pool_strings'] = ['w%d' % v for v in pool]
        else:
            attrs['pool_int64s'] = pool
        if k % 2:
            attrs['weights'] = [float(v) for v in rng.integers(1, 9, ngrams) / 4]
        shape = [(8,), (3, 7), (1, 5), (2, 1)][k % 4]
        xi = rng.integers(0, vocab, shape)
        if strings:
            x, xtype = np.array(['w%d' % v for v in xi.ravel()], dtype=object).reshape(shape), \
                'string'
        else:
            xtype = 'int64' if k % 2 else 'int32'
            x = xi.astype(NP[xtype])
        n += case('tfidf_%02d' % n, 'TfIdfVectorizer', x, xtype, attrs, 9, [F])
    return n


def main():
    os.environ.setdefault('NODE_PATH', os.path.expanduser('~/.cache/om-oracle/node_modules'))
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    counts = {'split': split_cases(), 'normalizer': normalizer_cases(), 'regex': regex_cases(),
              'tfidf': tfidf_cases()}
    print('cases written:', counts)


if __name__ == '__main__':
    main()
