#!/usr/bin/env python3
"""check_unroll.py — the unroll_loops pass on Loop models made with onnx.helper.

    check_unroll.py OMOPT

Each case is simplified by `omopt simplify IN OUT --check 3` (omopt's executor runs both on the
same random inputs and the command fails when an output differs); then ONNX Runtime (the
oracle, ../shared/oracle; left out, saying so, when it is not installed) runs the original and
the simplified model at N = 0, 1, 3 and the outputs must agree (to 1e-5). The Loops left are
counted against the expected number, and the simplified model's file may not be larger than
the original's. Exit 0 when all pass, 1 when one fails, 77 (skipped) without numpy/onnx.
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
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("OMOPT_SHARED") or os.path.join(HERE, "..", "..", "shared")
ORACLE = os.path.join(SHARED, "oracle", "ort_run.js")
NODE_MODULES = os.path.expanduser("~/.cache/om-oracle/node_modules")
HAVE_ORT = os.path.isfile(ORACLE) and os.path.isdir(os.path.join(NODE_MODULES,
                                                                    "onnxruntime-node"))


def const(name, arr):
    return nh.from_array(np.asarray(arr), name)


def body_graph(nodes, inputs, outputs, inits=()):
    return h.make_graph(nodes, "body", inputs, outputs, initializer=list(inits))


def loop_model(body, trip, cond, carried_init, scan_names=(), opset=17, extra_inputs=(),
               extra_nodes=(), inits=(), outputs_carried=None):
    """x: float [N, 4]; a Loop over `body` reading M=trip (None: ""), cond (None: "", else a
    constant bool), carried_init (names)."""
    ins = [h.make_tensor_value_info("x", T.FLOAT, ["N", 4])] + list(extra_inputs)
    init = list(inits)
    m_name = ""
    if trip is not None:
        init.append(const("M", np.array(trip, dtype=np.int64)))
        m_name = "M"
    c_name = ""
    if cond is not None:
        init.append(const("C0", np.array(cond, dtype=np.bool_)))
        c_name = "C0"
    outs_c = outputs_carried or ["out_%d" % i for i in range(len(carried_init))]
    outs = outs_c + ["scan_%s" % s for s in scan_names]
    loop = h.make_node("Loop", [m_name, c_name] + list(carried_init), outs, body=body)
    g = h.make_graph(list(extra_nodes) + [loop], "g", ins,
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs],
                     initializer=init)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def iter_body(scan=True, cond_passthrough=True, outer="x"):
    """carried s: s + float(i) * k + outer[0]; scan output: the new s."""
    nodes = [
        h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
        h.make_node("Mul", ["fi", "k"], ["ik"]),
        h.make_node("Add", ["s_in", "ik"], ["t"]),
        h.make_node("ReduceSum", ["t"], ["u"], keepdims=1),
        h.make_node("Add", ["t", "u"], ["s_out"]),
    ]
    if cond_passthrough:
        cond_out = "c_in"
    else:
        nodes.append(h.make_node("Less", ["i", "two"], ["c_out"]))
        cond_out = "c_out"
    if outer:
        nodes[2] = h.make_node("Add", ["s_in", "ik"], ["t0"])
        nodes.insert(3, h.make_node("Add", ["t0", "o"], ["t"]))
        nodes.insert(0, h.make_node("Identity", [outer], ["o"]))
    outs = [h.make_tensor_value_info(cond_out, T.BOOL, []),
            h.make_tensor_value_info("s_out", T.FLOAT, None)]
    if scan:
        nodes.append(h.make_node("Neg", ["s_out"], ["sc"]))
        outs.append(h.make_tensor_value_info("sc", T.FLOAT, None))
    return body_graph(
        nodes,
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, []),
         h.make_tensor_value_info("s_in", T.FLOAT, None)],
        outs,
        [const("k", np.array([0.5, -1.0, 2.0, 0.25], dtype=np.float32)),
         const("two", np.array(2, dtype=np.int64))])


def cases():
    yield "trip0", loop_model(iter_body(scan=False), 0, None, ["x"]), 0
    yield "trip1_scan", loop_model(iter_body(), 1, None, ["x"], ["sc"]), 0
    yield "cond_true_trip1", loop_model(iter_body(scan=False), 1, True, ["x"]), 0
    yield "cond_false_trip4", loop_model(iter_body(scan=False), 4, False, ["x"]), 0
    yield "opset11_scan", loop_model(iter_body(), 1, None, ["x"], ["sc"], opset=11), 0
    # every input constant, 3 iterations: the copies would not fit the size rule (the folder
    # does not evaluate Loops), kept
    m = loop_model(iter_body(scan=True, outer=None), 3, True, ["xc"], ["sc"],
                   inits=[const("xc", np.arange(8, dtype=np.float32).reshape(2, 4))])
    yield "all_constant_trip3", m, 1
    # every input constant, 1 iteration: unrolled (its nodes then fold)
    m = loop_model(iter_body(scan=True, outer=None), 1, True, ["xc"], ["sc"],
                   inits=[const("xc", np.arange(8, dtype=np.float32).reshape(2, 4))])
    yield "all_constant_trip1", m, 0
    # 3 iterations over the input x: the copies would make the model larger, kept
    yield "trip3_grows", loop_model(iter_body(), 3, None, ["x"], ["sc"]), 1
    # the body may end the loop early (Less(i, 2)): stays
    yield "dynamic_cond", loop_model(iter_body(scan=False, cond_passthrough=False), 4, True,
                                     ["x"]), 1
    # 300 iterations: past the node bound, stays
    yield "too_many", loop_model(iter_body(scan=False), 300, None, ["x"]), 1
    # the trip count is an input: stays
    m = loop_model(iter_body(scan=False), None, None, ["x"])
    m.graph.node[0].input[0] = "Mi"
    m.graph.input.append(h.make_tensor_value_info("Mi", T.INT64, []))
    yield "dynamic_trip", m, 1
    # the trip count an input, a Cast to float after each output (the carried value and the
    # scan output): the Loop's output types come from the body, so the Casts go (no-op)
    m = loop_model(iter_body(), None, None, ["x"], ["sc"])
    m.graph.node[0].input[0] = "Mi"
    m.graph.input.append(h.make_tensor_value_info("Mi", T.INT64, []))
    for o in m.graph.output:
        m.graph.node.append(h.make_node("Cast", [o.name], [o.name + "_f"], to=T.FLOAT))
        o.name += "_f"
    yield "loop_types", m, 1


def run_ort(model_path, feeds, tmp):
    """The model's outputs in ONNX Runtime, by name."""
    out = model_path + ".out"
    os.makedirs(out, exist_ok=True)
    args = []
    for k, v in feeds.items():
        f = os.path.join(tmp, "in_%s.npy" % k)
        np.save(f, v)
        args.append("%s=%s" % (k, f))
    env = dict(os.environ, NODE_PATH=NODE_MODULES)
    subprocess.run(["node", ORACLE, model_path, out] + args, check=True, env=env,
                   capture_output=True)
    names = [o.name for o in onnx.load(model_path).graph.output]
    return {k: np.load(os.path.join(out, "%d.npy" % i)) for i, k in enumerate(names)}


def size_without_shapes(path):
    """The saved size as the size rule counts it: no value_info, no value types."""
    m = onnx.load(path)

    def strip(g):
        del g.value_info[:]
        for v in list(g.input) + list(g.output):
            v.ClearField("type")
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    strip(a.g)
    strip(m.graph)
    return m.ByteSize()


def loops(path):
    return sum(n.op_type == "Loop" for n in onnx.load(path).graph.node)


def main():
    failed = 0
    if not HAVE_ORT:
        print("ONNX Runtime comparison left out: no %s or no %s/onnxruntime-node" % (
            ORACLE, NODE_MODULES))
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, want_loops in cases():
            src = os.path.join(tmp, name + ".onnx")
            dst = os.path.join(tmp, name + "_s.onnx")
            onnx.save(model, src)
            p = subprocess.run([OMOPT, "simplify", src, dst, "--check", "3"],
                               capture_output=True, text=True)
            problems = []
            if p.returncode != 0:
                problems.append("simplify exit %d: %s" % (p.returncode,
                                                          (p.stderr or p.stdout)[-400:]))
            else:
                if loops(dst) != want_loops:
                    problems.append("%d Loops left, want %d" % (loops(dst), want_loops))
                casts = sum(n.op_type == "Cast" for n in onnx.load(dst).graph.node)
                if name == "loop_types" and casts:
                    problems.append("%d Casts to float of float Loop outputs left" % casts)
                if size_without_shapes(dst) > size_without_shapes(src):
                    problems.append("larger: %d -> %d bytes" % (size_without_shapes(src),
                                                                size_without_shapes(dst)))
                for n in ((0, 1, 3) if HAVE_ORT else ()):
                    rng = np.random.default_rng(n)
                    feeds = {"x": rng.standard_normal((n, 4)).astype(np.float32)}
                    if name in ("dynamic_trip", "loop_types"):
                        feeds["Mi"] = np.array(3, dtype=np.int64)
                    a, b = run_ort(src, feeds, tmp), run_ort(dst, feeds, tmp)
                    for k in a:
                        if k not in b or a[k].shape != b[k].shape or \
                                not np.allclose(a[k], b[k], rtol=1e-5, atol=1e-5):
                            problems.append("N=%d: output %s differs (%s vs %s)" % (
                                n, k, a[k].shape, b[k].shape if k in b else "missing"))
            print("%s %s%s" % ("FAIL" if problems else "ok", name,
                               ": " + "; ".join(problems) if problems else ""))
            failed += bool(problems)
        failed += malformed_body_kept(tmp)
    print("%d failed" % failed)
    return 1 if failed else 0


def malformed_body_kept(tmp):
    """A body output nothing defines (a fuzzed model's): the Loop stays, and the simplified model
    passes the verifier (unrolled, an Identity read a value no node wrote: an Internal error)."""
    body = iter_body(scan=False)
    body.output[1].name = "s_typo"
    src, dst = os.path.join(tmp, "malformed.onnx"), os.path.join(tmp, "malformed_s.onnx")
    onnx.save(loop_model(body, 1, None, ["x"]), src)
    p = subprocess.run([OMOPT, "simplify", src, dst, "--verify"], capture_output=True, text=True)
    problems = []
    if p.returncode != 0:
        problems.append("simplify exit %d: %s" % (p.returncode, (p.stderr or p.stdout)[-400:]))
    elif loops(dst) != 1:
        problems.append("%d Loops left, want 1" % loops(dst))
    print("%s malformed_body%s" % ("FAIL" if problems else "ok",
                                   ": " + "; ".join(problems) if problems else ""))
    return int(bool(problems))


if __name__ == "__main__":
    sys.exit(main())
