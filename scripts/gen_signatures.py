#!/usr/bin/python3
"""gen_signatures.py — writes each op row's signature (ops/op.h om_sig) into its kernel file
(kernels/<family>/ops_*.c).

    /usr/bin/python3 scripts/gen_signatures.py CHANGELOG.md ROWS.txt [--write]

CHANGELOG.md is ONNX's docs/Changelog.md (ONNX 1.23 was used: opsets 1-28 of ai.onnx; every
version of every ai.onnx op: inputs with their "(optional)" / "(variadic)" marks, types and
"(min - max)" counts, attributes with their types and "(required)" marks, type constraints);
ROWS.txt is `omopt info --ops`. The com.microsoft rows (and ONNX Runtime's LayerNormalization
in the default domain since 1) come from CONTRIB below, written from ONNX Runtime's
docs/ContribOperators.md; they admit no half type. For each row the script takes the ONNX
versions the row runs (the one in force at the row's since-version, and every later one before
the op's next row) and emits one om_sig per version whose arity, optional slots, attributes or
half-type slots differ from the one before, chained oldest -> newer. Without --write it prints
what it would change.

Half-type slots (in_f16, out_f16, in_bf16, out_bf16, for the half conversion,
passes/half_convert.c): the slots whose type constraint lists tensor(float16) / tensor(bfloat16),
bit i for slot i (63: slot 63 and every later one), a variadic last slot setting its bit and
every later one. A slot typed by a sequence or optional is never marked: the conversion only
changes tensors. A version ONNX lists as deprecated without a schema (Upsample-10, Scatter-11)
keeps the older version's arity and admits no half type.

The result is written between the markers SIG_BEGIN / SIG_END in front of the file's
`static const om_op rows[]`; it is reviewed like code. Rows reference `&sig_<Op>_<since>`
(`sig_ms_<Op>_<since>` for com.microsoft).
"""
import glob
import os
import re
import sys

MANY = 'OM_MANY'
SIG_BEGIN = '/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */'
SIG_END = '/* ---- end of signatures ---- */'
TYPES = {'float': 'FLOAT', 'int': 'INT', 'string': 'STRING', 'tensor': 'TENSOR',
         'graph': 'GRAPH', 'list of floats': 'FLOATS', 'list of ints': 'INTS',
         'list of strings': 'STRINGS', 'list of tensors': 'TENSORS', 'list of graphs': 'GRAPHS',
         'sparse_tensor': 'SPARSE_TENSOR', 'list of sparse_tensors': 'SPARSE_TENSORS',
         'type_proto': 'TYPE_PROTO', 'list of type_protos': 'TYPE_PROTOS'}


NO_HALF = (0, 0, 0, 0)


def sig(inputs, outputs, attrs, in_range=None, out_range=None, half=NO_HALF):
    """inputs/outputs: [(name, 'req' | 'opt' | 'var')]; attrs: {name: (TYPE, required)};
    half: the masks (in_f16, out_f16, in_bf16, out_bf16)."""
    def rng(slots):
        if slots and slots[-1][1] == 'var':
            return (len(slots), MANY)
        n = len(slots)
        while n and slots[n - 1][1] == 'opt':
            n -= 1
        return (n, len(slots))
    return {'inputs': inputs, 'outputs': outputs, 'attrs': attrs,
            'in': in_range or rng(inputs), 'out': out_range or rng(outputs), 'half': half}


def half_mask(types, slots, want):
    """slots: [(type string, variadic)]; types: {constraint: [tensor(...), ...]}."""
    bits = 0
    for i, (ty, variadic) in enumerate(slots):
        if 'tensor(%s)' % want in types.get(ty, [ty]):
            bits |= 1 << min(i, 63)
            if variadic:  # this slot and every later one
                bits |= ((1 << 64) - 1) & ~((1 << i) - 1)
    return bits


def half_masks(types, inputs, outputs):
    return tuple(half_mask(types, slots, want) for want in ('float16', 'bfloat16')
                 for slots in (inputs, outputs))


CV = [('X', 'req'), ('W', 'req'), ('B', 'opt')]
CONV_ATTRS = {'auto_pad': ('STRING', False), 'dilations': ('INTS', False),
              'group': ('INT', False), 'kernel_shape': ('INTS', False),
              'pads': ('INTS', False), 'strides': ('INTS', False)}
CONTRIB = {
    ('com.microsoft', 'Gelu'): sig([('X', 'req')], [('Y', 'req')], {}),
    ('com.microsoft', 'FastGelu'): sig([('X', 'req'), ('bias', 'opt')], [('Y', 'req')], {}),
    ('com.microsoft', 'BiasGelu'): sig([('A', 'req'), ('B', 'req')], [('C', 'req')], {}),
    ('com.microsoft', 'QuickGelu'): sig([('X', 'req')], [('Y', 'req')],
                                        {'alpha': ('FLOAT', False)}),
    ('com.microsoft', 'SkipLayerNormalization'): sig(
        [('input', 'req'), ('skip', 'req'), ('gamma', 'req'), ('beta', 'opt'),
         ('bias', 'opt')],
        [('output', 'req'), ('mean', 'opt'), ('inv_std_var', 'opt'),
         ('input_skip_bias_sum', 'opt')], {'epsilon': ('FLOAT', False)}),
    ('com.microsoft', 'MatMulNBits'): sig(
        [('A', 'req'), ('B', 'req'), ('scales', 'req'), ('zero_points', 'opt'),
         ('g_idx', 'opt'), ('bias', 'opt')], [('Y', 'req')],
        {'K': ('INT', True), 'N': ('INT', True), 'accuracy_level': ('INT', False),
         'bits': ('INT', False), 'block_size': ('INT', True),
         'weight_prepacked': ('INT', False)}),
    ('com.microsoft', 'RotaryEmbedding'): sig(
        [('input', 'req'), ('position_ids', 'req'), ('cos_cache', 'req'), ('sin_cache', 'req')],
        [('output', 'req')],
        {'interleaved': ('INT', False), 'is_packed_batching': ('INT', False),
         'num_heads': ('INT', False), 'rotary_embedding_dim': ('INT', False),
         'scale': ('FLOAT', False)}),
    ('com.microsoft', 'SkipSimplifiedLayerNormalization'): sig(
        [('input', 'req'), ('skip', 'req'), ('gamma', 'req'), ('bias', 'opt')],
        [('output', 'req'), ('mean', 'opt'), ('inv_std_var', 'opt'),
         ('input_skip_bias_sum', 'opt')], {'epsilon': ('FLOAT', False)}),
    ('com.microsoft', 'GroupQueryAttention'): sig(
        [('query', 'req'), ('key', 'opt'), ('value', 'opt'), ('past_key', 'opt'),
         ('past_value', 'opt'), ('seqlens_k', 'req'), ('total_sequence_length', 'req'),
         ('cos_cache', 'opt'), ('sin_cache', 'opt'), ('position_ids', 'opt'),
         ('attention_bias', 'opt'), ('head_sink', 'opt'), ('k_scale', 'opt'), ('v_scale', 'opt'),
         ('q_norm_weight', 'opt'), ('k_norm_weight', 'opt')],
        [('output', 'req'), ('present_key', 'opt'), ('present_value', 'opt'),
         ('output_qk', 'opt')],
        {'causal': ('INT', False), 'do_rotary': ('INT', False),
         'k_quant_type': ('STRING', False), 'kv_cache_bit_width': ('INT', False),
         'kv_num_heads': ('INT', True), 'local_window_size': ('INT', False),
         'num_heads': ('INT', True), 'qk_norm_epsilon': ('FLOAT', False),
         'qk_output': ('INT', False), 'rotary_interleaved': ('INT', False),
         'scale': ('FLOAT', False), 'sliding_window_cache': ('INT', False),
         'smooth_softmax': ('INT', False), 'softcap': ('FLOAT', False),
         'v_quant_type': ('STRING', False)}),
    ('com.microsoft', 'MultiHeadAttention'): sig(
        [('query', 'req'), ('key', 'opt'), ('value', 'opt'), ('bias', 'opt'),
         ('key_padding_mask', 'opt'), ('attention_bias', 'opt'), ('past_key', 'opt'),
         ('past_value', 'opt'), ('past_sequence_length', 'opt'), ('cache_indirection', 'opt')],
        [('output', 'req'), ('present_key', 'opt'), ('present_value', 'opt'), ('qk', 'opt')],
        {'mask_filter_value': ('FLOAT', False), 'num_heads': ('INT', True),
         'scale': ('FLOAT', False), 'unidirectional': ('INT', False)}),
    ('com.microsoft', 'Attention'): sig(
        [('input', 'req'), ('weights', 'req'), ('bias', 'opt'), ('mask_index', 'opt'),
         ('past', 'opt'), ('attention_bias', 'opt'), ('past_sequence_length', 'opt')],
        [('output', 'req'), ('present', 'opt')],
        {'do_rotary': ('INT', False), 'mask_filter_value': ('FLOAT', False),
         'num_heads': ('INT', True), 'past_present_share_buffer': ('INT', False),
         'qkv_hidden_sizes': ('INTS', False), 'rotary_embedding_dim': ('INT', False),
         'scale': ('FLOAT', False), 'unidirectional': ('INT', False)}),
    ('com.microsoft', 'QAttention'): sig(
        [('input', 'req'), ('weight', 'req'), ('bias', 'req'), ('input_scale', 'req'),
         ('weight_scale', 'req'), ('mask_index', 'opt'), ('input_zero_point', 'opt'),
         ('weight_zero_point', 'opt'), ('past', 'opt')],
        [('output', 'req'), ('present', 'opt')],
        {'do_rotary': ('INT', False), 'mask_filter_value': ('FLOAT', False),
         'num_heads': ('INT', True), 'past_present_share_buffer': ('INT', False),
         'scale': ('FLOAT', False), 'unidirectional': ('INT', False)}),
    ('com.microsoft', 'FusedConv'): sig(
        CV + [('Z', 'opt')], [('Y', 'req')],
        dict(CONV_ATTRS, activation=('STRING', False), activation_params=('FLOATS', False))),
    ('com.microsoft', 'FusedMatMul'): sig(
        [('A', 'req'), ('B', 'req')], [('Y', 'req')],
        {'alpha': ('FLOAT', False), 'transA': ('INT', False), 'transB': ('INT', False),
         'transBatchA': ('INT', False), 'transBatchB': ('INT', False)}),
    ('com.microsoft', 'MatMulIntegerToFloat'): sig(
        [('A', 'req'), ('B', 'req'), ('a_scale', 'req'), ('b_scale', 'req'),
         ('a_zero_point', 'opt'), ('b_zero_point', 'opt'), ('bias', 'opt')], [('Y', 'req')], {}),
    ('com.microsoft', 'GatherBlockQuantized'): sig(
        [('data', 'req'), ('indices', 'req'), ('scales', 'req'), ('zero_points', 'opt')],
        [('output', 'req')],
        {'bits': ('INT', False), 'block_size': ('INT', False), 'gather_axis': ('INT', False),
         'quantize_axis': ('INT', False)}),
    ('com.microsoft', 'DynamicQuantizeMatMul'): sig(
        [('A', 'req'), ('B', 'req'), ('b_scale', 'req'), ('b_zero_point', 'opt'),
         ('bias', 'opt')], [('Y', 'req')], {}),
    ('com.microsoft', 'QLinearAdd'): sig(
        [('A', 'req'), ('A_scale', 'req'), ('A_zero_point', 'opt'), ('B', 'req'),
         ('B_scale', 'req'), ('B_zero_point', 'opt'), ('C_scale', 'req'),
         ('C_zero_point', 'opt')], [('C', 'req')], {}),
    ('com.microsoft', 'QLinearMul'): sig(
        [('A', 'req'), ('A_scale', 'req'), ('A_zero_point', 'opt'), ('B', 'req'),
         ('B_scale', 'req'), ('B_zero_point', 'opt'), ('C_scale', 'req'),
         ('C_zero_point', 'opt')], [('C', 'req')], {}),
    ('com.microsoft', 'QLinearSigmoid'): sig(
        [('X', 'req'), ('X_scale', 'req'), ('X_zero_point', 'opt'), ('Y_scale', 'req'),
         ('Y_zero_point', 'opt')], [('Y', 'req')], {}),
    ('com.microsoft', 'QLinearLeakyRelu'): sig(
        [('X', 'req'), ('X_scale', 'req'), ('X_zero_point', 'opt'), ('Y_scale', 'req'),
         ('Y_zero_point', 'opt')], [('Y', 'req')], {'alpha': ('FLOAT', False)}),
    ('com.microsoft', 'QLinearConcat'): sig(
        [('Y_scale', 'req'), ('Y_zero_point', 'req'), ('inputs', 'var')], [('Y', 'req')],
        {'axis': ('INT', True)}),
    ('com.microsoft', 'QLinearGlobalAveragePool'): sig(
        [('X', 'req'), ('x_scale', 'req'), ('x_zero_point', 'req'), ('y_scale', 'req'),
         ('y_zero_point', 'req')], [('Y', 'req')], {'channels_last': ('INT', False)}),
    ('com.microsoft', 'QLinearAveragePool'): sig(
        [('X', 'req'), ('x_scale', 'req'), ('x_zero_point', 'opt'), ('y_scale', 'req'),
         ('y_zero_point', 'opt')], [('Y', 'req')],
        {'auto_pad': ('STRING', False), 'ceil_mode': ('INT', False),
         'channels_last': ('INT', False), 'count_include_pad': ('INT', False),
         'kernel_shape': ('INTS', True), 'pads': ('INTS', False), 'strides': ('INTS', False)}),
    ('com.microsoft', 'QGemm'): sig(
        [('A', 'req'), ('a_scale', 'req'), ('a_zero_point', 'req'), ('B', 'req'),
         ('b_scale', 'req'), ('b_zero_point', 'req'), ('C', 'opt'), ('y_scale', 'opt'),
         ('y_zero_point', 'opt')], [('Y', 'req')],
        {'alpha': ('FLOAT', False), 'transA': ('INT', False), 'transB': ('INT', False)}),
    # ONNX's Changelog lists GroupNormalization-18 as deprecated without its schema (ONNX 1.14)
    ('ai.onnx', 'GroupNormalization', 18): sig(
        [('X', 'req'), ('scale', 'req'), ('bias', 'req')], [('Y', 'req')],
        {'epsilon': ('FLOAT', False), 'num_groups': ('INT', True)}),
    # ONNX Runtime's LayerNormalization, registered in the default domain since version 1
    ('ai.onnx', 'LayerNormalization', 1): sig(
        [('X', 'req'), ('Scale', 'req'), ('B', 'opt')],
        [('Y', 'req'), ('Mean', 'opt'), ('InvStdDev', 'opt')],
        {'axis': ('INT', False), 'epsilon': ('FLOAT', False), 'stash_type': ('INT', False)}),
    # ONNX Runtime's SimplifiedLayerNormalization (RMS), registered in the default domain since 1
    ('ai.onnx', 'SimplifiedLayerNormalization', 1): sig(
        [('X', 'req'), ('scale', 'req')], [('Y', 'req'), ('inv_std_var', 'opt')],
        {'axis': ('INT', False), 'epsilon': ('FLOAT', False), 'stash_type': ('INT', False)}),
}


ML = 'ai.onnx.ml'
# ai.onnx.ml rows: every version the installed onnx package has a schema for (Debian's onnx
# 1.12: ml opsets 1-3); ML_NEWER holds what is newer than it, written from ONNX 1.23's
# docs/Changelog-ml.md. No half-type slots (not an ai.onnx schema).
ML_NEWER = {
    ('TreeEnsemble', 5): sig(
        [('X', 'req')], [('Y', 'req')],
        {'aggregate_function': ('INT', False), 'leaf_targetids': ('INTS', True),
         'leaf_weights': ('TENSOR', True), 'membership_values': ('TENSOR', False),
         'n_targets': ('INT', False), 'nodes_falseleafs': ('INTS', True),
         'nodes_falsenodeids': ('INTS', True), 'nodes_featureids': ('INTS', True),
         'nodes_hitrates': ('TENSOR', False), 'nodes_missing_value_tracks_true': ('INTS', False),
         'nodes_modes': ('TENSOR', True), 'nodes_splits': ('TENSOR', True),
         'nodes_trueleafs': ('INTS', True), 'nodes_truenodeids': ('INTS', True),
         'post_transform': ('INT', False), 'tree_roots': ('INTS', True)}),
}
ML_OPS = {}


def ml_schemas():
    """{name: {version: sig}} of the ai.onnx.ml domain."""
    import onnx.defs
    ops = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain != ML:
            continue
        opt = onnx.defs.OpSchema.FormalParameterOption

        def slots(ps):
            return [(p.name, 'var' if p.option == opt.Variadic else
                     'opt' if p.option == opt.Optional else 'req') for p in ps]
        attrs = {a.name: (a.type.name, bool(a.required)) for a in s.attributes.values()}
        ops.setdefault(s.name, {})[s.since_version] = sig(slots(s.inputs), slots(s.outputs),
                                                          attrs)
    for (name, ver), sg in ML_NEWER.items():
        ops.setdefault(name, {})[ver] = sg
    return ops


def parse_changelog(path):
    text = open(path, encoding='utf-8').read()
    ops = {}
    heads = list(re.finditer(r'^### <a name="([^"]+)-(\d+)"></a>', text, re.M))
    for k, h in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = text[h.end():end]
        name, ver = h.group(1), int(h.group(2))
        if '.' in name:  # ai.onnx.preview* domains
            continue
        slots = {'Inputs': [], 'Outputs': []}
        typed = {'Inputs': [], 'Outputs': []}  # (type string, variadic) per slot
        types = {}  # type constraint -> the types it allows
        ranges = {}
        attrs = {}
        sec = None
        for line in body.split('\n'):
            mh = re.match(r'#### (\w+)(?: \((\d+) - (\d+|&#8734;)\))?', line)
            if mh:
                sec = mh.group(1)
                if mh.group(2):
                    hi = mh.group(3)
                    ranges[sec] = (int(mh.group(2)), MANY if hi == '&#8734;' else int(hi))
                continue
            md = re.match(r'<dt><tt>([^<]+)</tt>(?: \(([^)]*)\))? : (.*)</dt>', line)
            if not md:
                continue
            if sec == 'Attributes':
                t = md.group(3)
                req = '(required)' in t
                t = re.sub(r' \(.*', '', t).strip()
                if t not in TYPES:
                    sys.exit('%s-%d: attribute %s of unknown type %r' % (name, ver,
                                                                          md.group(1), t))
                attrs[md.group(1)] = (TYPES[t], req)
            elif sec == 'Type':
                types[md.group(1)] = [t.strip() for t in md.group(3).split(',')]
            elif sec in slots:
                marks = md.group(2) or ''
                kind = 'var' if 'variadic' in marks else 'opt' if 'optional' in marks else 'req'
                slots[sec].append((md.group(1), kind))
                typed[sec].append((md.group(3).strip(), kind == 'var'))
        if not slots['Inputs'] and not slots['Outputs'] and 'deprecated' in body[:2000]:
            # Upsample-10, Scatter-11: removed; the older row goes on, admitting no half type
            older = [v for v in ops.get(name, {}) if v < ver]
            if older:
                ops[name][ver] = dict(ops[name][max(older)], half=NO_HALF)
            continue
        ops.setdefault(name, {})[ver] = sig(slots['Inputs'], slots['Outputs'], attrs,
                                            ranges.get('Inputs'), ranges.get('Outputs'),
                                            half_masks(types, typed['Inputs'], typed['Outputs']))
    return ops


def read_rows(path):
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) >= 3 and f[2].isdigit():
            rows.append((f[0], f[1], int(f[2])))
    return rows


def row_versions(ops, rows, dom, name, since):
    """[(version, sig)] the row runs, oldest first."""
    if (dom, name) in CONTRIB:
        return [(since, CONTRIB[(dom, name)])]
    vs = ops.get(name, {}) if dom == 'ai.onnx' else ML_OPS.get(name, {}) if dom == ML else {}
    nxt = min([s for d, n, s in rows if d == dom and n == name and s > since], default=1 << 30)
    if (dom, name, since) in CONTRIB:  # then ONNX's own versions, should the row run them
        return [(since, CONTRIB[(dom, name, since)])] + [
            (v, vs[v]) for v in sorted(vs) if since < v < nxt]
    first = [v for v in vs if v <= since]
    sel = ([max(first)] if first else []) + sorted(v for v in vs if since < v < nxt)
    if not sel:
        sys.exit('no schema for %s %s %d' % (dom, name, since))
    return [(max(v, since), vs[v]) for v in sel]


def key(s):
    return (s['in'], s['out'], tuple(k for _, k in s['inputs']),
            tuple(k for _, k in s['outputs']), tuple(sorted(s['attrs'].items())), s['half'])


def mask(slots, var_optional):
    m = 0
    for i in range(64):
        if not slots:
            break
        k = slots[min(i, len(slots) - 1)][1] if slots[-1][1] == 'var' else (
            slots[i][1] if i < len(slots) else None)
        if k == 'opt' or (k == 'var' and var_optional):
            m |= 1 << i
    return m


def io_text(slots):
    out = []
    for n, k in slots:
        out.append('[%s]' % n if k == 'opt' else n + '...' if k == 'var' else n)
    return ' '.join(out) or '-'


def emit_row(dom, name, since, versions):
    base = ('sig_ms_%s_%d' if dom == 'com.microsoft' else 'sig_%s_%d') % (name, since)
    chain = []
    for v, s in versions:
        if chain and key(chain[-1][1]) == key(s):
            continue
        chain.append((v, s))
    out = []
    newer = 'NULL'
    for idx in range(len(chain) - 1, -1, -1):
        v, s = chain[idx]
        cname = base if idx == 0 else '%s_v%d' % (base, v)
        aname = 'NULL'
        if s['attrs']:
            aname = 'attrs_' + cname[4:]
            items = ', '.join('{"%s", OM_ATTR_%s, %d}' % (a, t, int(r))
                              for a, (t, r) in sorted(s['attrs'].items()))
            out.append(wrap('static const om_sig_attr %s[] = {%s, {NULL, 0, 0}};' %
                            (aname, items)))
        comment = '/* %s-%d: %s -> %s */' % (name, v, io_text(s['inputs']),
                                              io_text(s['outputs']))
        if len(comment) > 100:
            comment = comment.replace(' -> ', '\n * -> ', 1)
        out.append(comment)
        vals = [str(v), str(s['in'][0]), str(s['in'][1]), str(s['out'][0]), str(s['out'][1]),
                '0x%x' % mask(s['inputs'], False), '0x%x' % mask(s['outputs'], True)]
        vals += ['0x%x' % m for m in s['half']]
        vals += [aname, '&' + newer if newer != 'NULL' else 'NULL']
        out.append(wrap('static const om_sig %s = {%s};' % (cname, ', '.join(vals))))
        newer = cname
    return out


def wrap(line, width=100):
    """Breaks a long C line between list items, continuation lines indented by one tab."""
    if len(line) <= width:
        return line
    lines, cur = [], ''
    sep = r'(?<=\}, )' if '{{' in line else r'(?<=, )'
    for part in re.split(sep, line):
        limit = width if not lines else width - 8
        if cur and len(cur) + len(part.rstrip()) > limit:
            lines.append(cur.rstrip())
            cur = ''
        cur += part
    lines.append(cur.rstrip())
    if len(lines[0]) > width and '= {' in lines[0]:
        a = lines[0].index('= {') + 3
        lines[0:1] = [lines[0][:a], lines[0][a:]]
    return '\n\t'.join(lines)


def row_file(root, dom, name, since):
    d = '"%s"' % dom if dom in ('com.microsoft', ML) else '""'
    pats = [r'\{"%s", %s, %d,' % (name, d, since)]
    if dom == 'ai.onnx':
        pats += [r'\bROW[BC]?\(%s, %d,' % (name, since), r'\bRED_ROWS\(%s,' % name]
    hits = []
    for f in sorted(glob.glob(os.path.join(root, 'kernels', '*', 'ops_*.c'))):
        f = os.path.relpath(f, root)
        text = open(os.path.join(root, f)).read()
        at = [m.start() for m in (re.search(p, text) for p in pats) if m]
        if at:
            hits.append((f, min(at)))
    if len(hits) != 1:
        sys.exit('row %s %s %d found in %s' % (dom, name, since,
                                               [f for f, _ in hits] or 'no file'))
    return hits[0]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    if len(args) != 2:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ops = parse_changelog(args[0])
    rows = read_rows(args[1])
    if any(d == ML for d, _, _ in rows):
        ML_OPS.update(ml_schemas())
    by_file = {}
    for dom, name, since in rows:
        f, at = row_file(root, dom, name, since)
        by_file.setdefault(f, []).append((at, since, dom, name))
    for f, placed in sorted(by_file.items()):
        lines = []
        for _, since, dom, name in sorted(placed):  # in the order of the file's rows
            lines += emit_row(dom, name, since, row_versions(ops, rows, dom, name, since))
        path = os.path.join(root, f)
        text = open(path).read()
        block = SIG_BEGIN + '\n\n' + '\n'.join(lines) + '\n\n' + SIG_END + '\n\n'
        if SIG_BEGIN in text:
            a = text.index(SIG_BEGIN)
            b = text.index(SIG_END) + len(SIG_END) + 2
            new = text[:a] + block + text[b:]
        else:
            a = text.index('static const om_op rows[]')
            new = text[:a] + block + text[a:]
        if '--write' in sys.argv:
            open(path, 'w').write(new)
        print('%s: %d lines of signatures' % (f, len(lines)))


if __name__ == '__main__':
    main()
