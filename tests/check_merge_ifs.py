#!/usr/bin/env python3
"""check_merge_ifs.py — the merge_ifs pass on If models made with onnx.helper.

    check_merge_ifs.py OMOPT [--skip-pass]

Each case is simplified by `omopt simplify IN OUT --check 3 --verify` (omopt's executor runs
both on random inputs and fails on a difference); then ONNX Runtime (the oracle, ../shared/oracle;
left out, saying so, when it is not installed) runs the original and the simplified model at
batch N = 0, 1, 2 (and T = 1, 2 where x's last dim is free) and the outputs, or the failure,
must agree (1e-5). The ops left in the main graph are counted against what the case expects.
--skip-pass runs with `--skip merge_ifs` (the counts must then fail: the test can fail).
Exit 0 when all pass, 1 when one fails, 77 (skipped) without numpy/onnx.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
except ImportError as e:
    print(f"SKIP: needs numpy and onnx ({e})")
    sys.exit(77)

OMOPT = os.path.abspath(sys.argv[1])
SKIP = "--skip-pass" in sys.argv
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("OMOPT_SHARED") or os.path.join(HERE, "..", "..", "shared")
ORACLE = os.path.join(SHARED, "oracle", "ort_run.js")
NODE_MODULES = os.path.expanduser("~/.cache/om-oracle/node_modules")
HAVE_ORT = os.path.isfile(ORACLE) and os.path.isdir(os.path.join(NODE_MODULES,
                                                                    "onnxruntime-node"))


def const(name, arr):
    return nh.from_array(np.asarray(arr), name)


def branch(name, nodes, out, inits=()):
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(o, T.FLOAT, None) for o in out],
                        initializer=list(inits))


def if_node(cond, outs, then_nodes, then_outs, else_nodes, else_outs, tag):
    return h.make_node("If", [cond], outs, name=tag,
                       then_branch=branch(tag + "_then", then_nodes, then_outs),
                       else_branch=branch(tag + "_else", else_nodes, else_outs))


def rank_model(gather_dim=False):
    """silero's LSTM cell input: c = (x's dim 0 == 1), x [N, 3, 1]; A = If(c, Squeeze(x, -1),
    x); the cell asks Size(Shape(A)) == 2 (or, gather_dim, Shape(A)[-1] == 3: 3 or 1) and
    unsqueezes A when not; a third If on the same Not picks state s[0] or s[0] unsqueezed (a
    Gather only that If reads); views after."""
    nodes = [
        h.make_node("Shape", ["x"], ["xs"]),
        h.make_node("Gather", ["xs", "z"], ["xt"], axis=0),
        h.make_node("Equal", ["xt", "one"], ["c"]),
        if_node("c", ["A"], [h.make_node("Squeeze", ["x", "m1"], ["sq"])], ["sq"],
                [h.make_node("Identity", ["x"], ["idx"])], ["idx"], "IfA"),
        h.make_node("Shape", ["A"], ["as"]),
    ]
    if gather_dim:  # Shape(A)[-1]: C (3) when c, else T
        nodes += [h.make_node("Gather", ["as", "m1"], ["ar"], axis=0),
                  h.make_node("Equal", ["ar", "three"], ["eq"])]
    else:
        nodes += [h.make_node("Size", ["as"], ["ar"]),
                  h.make_node("Equal", ["ar", "two"], ["eq"])]
    nodes += [
        h.make_node("Not", ["eq"], ["ne"]),
        if_node("ne", ["B"], [h.make_node("Unsqueeze", ["A", "z"], ["un"])], ["un"],
                [h.make_node("Identity", ["A"], ["idb"])], ["idb"], "IfB"),
        h.make_node("Gather", ["s", "zero"], ["s0"], axis=0),
        if_node("ne", ["Cst"], [h.make_node("Unsqueeze", ["s0", "z"], ["us"])], ["us"],
                [h.make_node("Identity", ["s0"], ["ids"])], ["ids"], "IfC"),
        h.make_node("Unsqueeze", ["B", "z"], ["y"]),
        h.make_node("Unsqueeze", ["Cst", "z"], ["y2"]),
    ]
    inits = [const("m1", np.array([-1], np.int64)), const("one", np.array([1], np.int64)),
             const("two", np.array(2, np.int64)), const("three", np.array([3], np.int64)),
             const("z", np.array([0], np.int64)), const("zero", np.array(0, np.int64))]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, 1]),
                                  h.make_tensor_value_info("s", T.FLOAT, [2, "N", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, None),
                      h.make_tensor_value_info("y2", T.FLOAT, None)], initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def cycle_model():
    """Two Ifs on one condition with a Relu between that reads the first and feeds the second
    (and is a graph output, so it cannot move into the second): merging them would make a
    cycle, so both stay; a third If on the condition joins the first."""
    nodes = [
        h.make_node("ReduceSum", ["x"], ["sx"], keepdims=0),
        h.make_node("Greater", ["sx", "zf"], ["c"]),
        if_node("c", ["A"], [h.make_node("Neg", ["x"], ["n"])], ["n"],
                [h.make_node("Abs", ["x"], ["a"])], ["a"], "If1"),
        h.make_node("Relu", ["A"], ["r"]),
        if_node("c", ["y"], [h.make_node("Exp", ["r"], ["e"])], ["e"],
                [h.make_node("Sin", ["r"], ["si"])], ["si"], "If2"),
        if_node("c", ["y3"], [h.make_node("Cos", ["x"], ["co"])], ["co"],
                [h.make_node("Sqrt", ["x"], ["sq"])], ["sq"], "If3"),
    ]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "T"]),
                                  h.make_tensor_value_info("s", T.FLOAT, [2, "N", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, None),
                      h.make_tensor_value_info("r", T.FLOAT, None),
                      h.make_tensor_value_info("y3", T.FLOAT, None)],
                     initializer=[const("zf", np.array(0, np.float32))])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


# name, model, ops expected in the main graph after (merge_ifs only; other ops free)
CASES = [
    ("rank_size", rank_model(), {"If": 1, "Size": 0, "Not": 0, "Gather": 1, "Unsqueeze": 0}),
    ("rank_gather", rank_model(True), {"If": 1, "Size": 0, "Not": 0, "Unsqueeze": 0}),
    # If3 joins If1 (no path between); If2 stays (Relu between)
    ("cycle", cycle_model(), {"If": 2, "Relu": 1}),
]


def run_ort(model_path, feeds, tmp):
    out = model_path + ".out"
    os.makedirs(out, exist_ok=True)
    args = []
    for k, v in feeds.items():
        f = os.path.join(tmp, "in_%s.npy" % k)
        np.save(f, v)
        args.append("%s=%s" % (k, f))
    env = dict(os.environ, NODE_PATH=NODE_MODULES)
    p = subprocess.run(["node", ORACLE, model_path, out] + args, env=env, capture_output=True)
    if p.returncode:
        return None
    names = [o.name for o in onnx.load(model_path).graph.output]
    return {k: np.load(os.path.join(out, "%d.npy" % i)) for i, k in enumerate(names)}


def main():
    if not HAVE_ORT:
        print("ONNX Runtime comparison left out: no %s or no onnxruntime-node in %s"
              % (ORACLE, NODE_MODULES))
    failed = 0
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, want in CASES:
            src, dst = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".s.onnx")
            onnx.save(model, src)
            cmd = [OMOPT, "simplify", src, dst, "--verify", "--check", "3"]
            if SKIP:
                cmd += ["--skip", "merge_ifs"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                print("FAIL %s: simplify: %s" % (name, p.stderr.strip()[-400:]))
                failed += 1
                continue
            ops = [n.op_type for n in onnx.load(dst).graph.node]
            got = {k: ops.count(k) for k in want}
            if got != want:
                print("FAIL %s: main graph has %s, want %s (%s)" % (name, got, want, ops))
                failed += 1
                continue
            bad = []
            for n in (0, 1, 2) if HAVE_ORT else ():
                for t in (1, 2):
                    if name.startswith("rank") and t != 1:
                        continue  # x is [N, 3, 1]: N decides the conditions
                    feeds = {"x": rng.standard_normal((n, 3, t)).astype(np.float32),
                             "s": rng.standard_normal((2, n, 4)).astype(np.float32)}
                    a = run_ort(src, feeds, tmp)
                    b = run_ort(dst, feeds, tmp)
                    if (a is None) != (b is None):
                        bad.append("N=%d T=%d: one model fails (%s)" % (n, t, a is None))
                    elif a is not None:
                        for k in a:
                            if a[k].shape != b[k].shape or not np.allclose(a[k], b[k], 1e-5, 1e-5, equal_nan=True):
                                bad.append("N=%d T=%d: %s differs" % (n, t, k))
            if bad:
                print("FAIL %s: %s" % (name, "; ".join(bad)))
                failed += 1
            else:
                print("ok   %s: %s" % (name, got))
    print("%d of %d cases failed" % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
