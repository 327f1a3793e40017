#!/usr/bin/python3
"""check_op_tables.py — a build-time check (meson runs it before runtime/gen_op_index): every
op table a kernel source defines (`const om_op_table om_ops_<group> = OM_TABLE(rows);`) is
listed in runtime/registry_tables.c's om_op_tables, so that no family's rows are left out of
the registry unnoticed.

    check_op_tables.py STAMP REGISTRY_TABLES.c KERNEL.c...

Writes STAMP when every table is listed; otherwise names each one that is not and exits 1.
"""
import re
import sys


def code(path):
    """The file's text without its comments."""
    text = open(path, encoding='utf-8').read()
    return re.sub(r'/\*.*?\*/|//[^\n]*', ' ', text, flags=re.S)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    stamp, registry, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = code(registry)
    array = re.search(r'om_op_tables\[\]\s*=\s*\{(.*?)\}', text, re.S)
    if not array:
        sys.exit('%s: no om_op_tables[] = {...}' % registry)
    listed = set(re.findall(r'&\s*(om_ops_\w+)', array.group(1)))
    missing = []
    for path in sources:
        for name in re.findall(r'\bom_op_table\s+(om_ops_\w+)\s*=', code(path)):
            if name not in listed:
                missing.append('%s: %s is not listed in %s' % (path, name, registry))
    if missing:
        sys.exit('\n'.join(missing))
    open(stamp, 'w').write('%d tables listed\n' % len(listed))


if __name__ == '__main__':
    main()
