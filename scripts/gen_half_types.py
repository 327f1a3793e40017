#!/usr/bin/python3
"""gen_half_types.py — writes ops/half_types.c: for every version of every ai.onnx op, which
input and output slots admit float16 and bfloat16 (ONNX's type constraints), for the half
conversion (passes/half_convert.c) to ask instead of guessing.

    /usr/bin/python3 scripts/gen_half_types.py CHANGELOG.md > ops/half_types.c

CHANGELOG.md is ONNX's docs/Changelog.md (1.23 was used: opsets 1-28 of ai.onnx). A slot is a
bit (bit i: slot i; a variadic last slot sets its bit and every later one, 63 standing
for the slots after it). A slot typed by a
sequence or optional is never marked: the conversion only changes tensors.
"""
import re
import sys

SECTION = re.compile(r'^### <a name="([A-Za-z0-9_]+)-(\d+)"></a>')
DT = re.compile(r'^<dt><tt>([^<]+)</tt>(.*?)</dt>')


def parse(path):
    ops, cur, part = [], None, None
    for line in open(path, encoding='utf-8'):
        if line.startswith('# ') and 'ai.onnx (default)' not in line and ops:
            break  # the preview and training domains follow the default one
        m = SECTION.match(line)
        if m:
            cur = {'name': m.group(1), 'since': int(m.group(2)), 'inputs': [], 'outputs': [],
                   'types': {}}
            ops.append(cur)
            part = None
            continue
        if cur is None:
            continue
        if line.startswith('#### '):
            part = line[5:].split()[0].lower()  # inputs, outputs, attributes, type
            continue
        m = DT.match(line.strip())
        if not m or part not in ('inputs', 'outputs', 'type'):
            continue
        name, rest = m.group(1), m.group(2)
        if part == 'type':
            cur['types'][name] = [t.strip() for t in rest.split(':', 1)[1].split(',')]
        else:
            marks, _, ty = rest.rpartition(':')
            cur[part].append((ty.strip(), 'variadic' in marks))
    return ops


def mask(op, slots, want):
    bits = 0
    for i, (ty, variadic) in enumerate(slots):
        allowed = op['types'].get(ty, [ty])
        if 'tensor(%s)' % want in allowed:
            bits |= 1 << min(i, 63)
            if variadic:  # this slot and every later one
                bits |= ((1 << 64) - 1) & ~((1 << i) - 1)
    return bits


def main():
    ops = sorted(parse(sys.argv[1]), key=lambda o: (o['name'], o['since']))
    print('/* half_types.c — which slots of each ai.onnx op version admit float16 and bfloat16')
    print(' * (ONNX 1.23 docs/Changelog.md type constraints; written by scripts/gen_half_types.py,')
    print(' * do not edit). Sorted by name (strcmp), then since. */')
    print('#include "half_types.h"\n')
    print('static const om_half_types rows[] = {')
    for o in ops:
        f = (mask(o, o['inputs'], 'float16'), mask(o, o['outputs'], 'float16'),
             mask(o, o['inputs'], 'bfloat16'), mask(o, o['outputs'], 'bfloat16'))
        print('\t{"%s", %d, 0x%xu, 0x%xu, 0x%xu, 0x%xu},' % ((o['name'], o['since']) + f))
    print('};\n')
    print('const om_half_types *om_half_types_rows(size_t *count)')
    print('{\n\t*count = sizeof rows / sizeof rows[0];\n\treturn rows;\n}')


if __name__ == '__main__':
    main()
