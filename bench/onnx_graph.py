"""Small edits of an ONNX graph that bench/quantize.py's subcommands share."""


def inits(g):
    """the graph's initializers by name"""
    return {t.name: t for t in g.initializer}


def set_nodes(g, nodes):
    """g's nodes replaced by nodes (a list that may hold some of them)"""
    del g.node[:]
    g.node.extend(nodes)


def keep_initializers(g, used):
    """only the initializers whose names are in used"""
    live = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(live)
