#!/usr/bin/env python3
"""check_opset.py — `omopt simplify --opset N`: each adapter on small models, up and down.

    check_opset.py OMOPT [--no-ort]

Builds one-op models with onnx.helper at a source opset (dynamic dims where the op allows),
converts them with `omopt simplify --skip all --opset N --check 4` (omopt's executor runs the
original at its opset and the result at N on the same random inputs, 4 runs with the symbols
at 1..4, and the command fails when an output differs) and checks the result's form: its
opset import, the converted node's inputs and attributes, the nodes an adapter added. Then
the refusals: a node the target cannot express exits 1 naming the node and op and writes
nothing. When ONNX Runtime is installed for the oracle (../shared/oracle), each converted
model also runs there on the same inputs as the original (ORT at both opsets, outputs
compared; --no-ort leaves that out). A few cases run once more with a symbol at 0 (an empty
batch, given with --input). Exit 0 when all pass, 1 when one fails, 77 (skipped) without numpy/onnx.
"""
import glob
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
NO_ORT = "--no-ort" in sys.argv[2:]
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("OMOPT_SHARED") or os.path.join(HERE, "..", "..", "shared")
ORACLE = os.path.join(SHARED, "oracle", "ort_run.js")
NODE_MODULES = os.path.expanduser("~/.cache/om-oracle/node_modules")
HAVE_ORT = os.path.isfile(ORACLE) and os.path.isdir(os.path.join(NODE_MODULES,
                                                                    "onnxruntime-node")) \
    and not NO_ORT
failures = []
TMP = tempfile.mkdtemp(prefix="check_opset_")


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, opset, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def ints(name, v):
    return nh.from_array(np.array(v, dtype=np.int64), name)


def convert(m, opset, name, extra=()):
    src = os.path.join(TMP, name + ".onnx")
    dst = os.path.join(TMP, "%s_to%d.onnx" % (name, opset))
    onnx.save(m, src)
    if os.path.exists(dst):
        os.remove(dst)
    p = subprocess.run([OMOPT, "simplify", src, dst, "--skip", "all", "--opset", str(opset),
                        *extra], capture_output=True, text=True)
    return p, src, dst


def ort_same(src, dst, inputs):
    """ONNX Runtime's outputs of the original and of the converted model on `inputs`."""
    outs = []
    for path in (src, dst):
        od = tempfile.mkdtemp(dir=TMP)
        args = ["node", ORACLE, path, od]
        for k, v in inputs.items():
            f = os.path.join(od, k + ".npy")
            np.save(f, v)
            args.append("%s=%s" % (k, f))
        env = dict(os.environ, NODE_PATH=NODE_MODULES)
        p = subprocess.run(args, capture_output=True, text=True, env=env)
        if p.returncode:
            return "ORT failed on %s: %s" % (os.path.basename(path),
                                              (p.stderr.strip().splitlines() or ["?"])[-1])
        outs.append([np.load(f) for f in sorted(glob.glob(os.path.join(od, "[0-9]*.npy")))])
    for a, b in zip(*outs):
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
            return "outputs differ"
    return None


def node_of(path, op):
    m = onnx.load(path)
    return [n for n in m.graph.node if n.op_type == op], m


def attr(n, name):
    for a in n.attribute:
        if a.name == name:
            return h.get_attribute_value(a)
    return None


def case(name, m, opset, form, inputs=None, runs=4, zero=None):
    """Converts m to opset with --check 4, checks `form(model, converted_path)`, and runs
    both in ONNX Runtime when it is installed (on `inputs`)."""
    p, src, dst = convert(m, opset, name, ["--check", str(runs)] if runs else [])
    tag = "%s -> %d" % (name, opset)
    check(p.returncode == 0, "%s: converted and checked (%s)" % (
        tag, (p.stderr.strip().splitlines() or ["ok"])[-1][:160]))
    if p.returncode:
        return
    out = onnx.load(dst)
    check([o.version for o in out.opset_import if o.domain in ("", "ai.onnx")] == [opset],
          "%s: opset import %d" % (tag, opset))
    check([i.name for i in out.graph.input] == [i.name for i in m.graph.input] and
          [o.name for o in out.graph.output] == [o.name for o in m.graph.output],
          "%s: graph inputs and outputs keep their names" % tag)
    if zero is not None:
        extra = ["--check", "1"]
        for k, v in zero.items():
            f = os.path.join(TMP, "%s_%s_zero.npy" % (name, k))
            np.save(f, v)
            extra += ["--input", "%s=%s" % (k, f)]
        pz, _, _ = convert(m, opset, name + "_zero", extra)
        check(pz.returncode == 0, "%s: checked at %s (%s)" % (
            tag, ", ".join("%s %s" % (k, v.shape) for k, v in zero.items()),
            (pz.stderr.strip().splitlines() or ["ok"])[-1][:160]))
    why = form(out, dst)
    check(why is None, "%s: form%s" % (tag, "" if why is None else ": " + why))
    if HAVE_ORT and inputs is not None:
        d = ort_same(src, dst, inputs)
        check(d is None, "%s: ONNX Runtime runs both alike%s" % (tag, "" if d is None
                                                                  else ": " + d))


def refused(name, m, opset, op, words):
    p, _, dst = convert(m, opset, name)
    tag = "%s -> %d refused" % (name, opset)
    err = p.stderr
    check(p.returncode == 1 and "Unsupported" in err and "(%s)" % op in err and words in err,
          "%s: %s" % (tag, (err.strip().splitlines() or ["no message"])[-1][:200]))
    check(not os.path.exists(dst), "%s: nothing written" % tag)


rng = np.random.default_rng(1)


def randn(*s):
    return rng.standard_normal(s).astype(np.float32)


# ---- Squeeze / Unsqueeze: axes attribute (before 13) <-> input ---------------------------
def squeeze_model(opset):
    x = vi("x", T.FLOAT, ["N", 1, 3, 1])
    y = vi("y", T.FLOAT, ["N", 3])
    if opset < 13:
        n = h.make_node("Squeeze", ["x"], ["y"], axes=[1, -1])
        return model([n], [x], [y], opset)
    n = h.make_node("Squeeze", ["x", "axes"], ["y"])
    return model([n], [x], [y], opset, [ints("axes", [1, -1])])


def axes_input(out, _):
    n = node_of(_, "Squeeze")[0] or node_of(_, "Unsqueeze")[0]
    if len(n[0].input) != 2 or attr(n[0], "axes") is not None:
        return "axes is not input 1"
    init = {i.name: nh.to_array(i) for i in out.graph.initializer}
    return None if n[0].input[1] in init else "axes input is not an initializer"


def axes_attr(out, _):
    n = (node_of(_, "Squeeze")[0] or node_of(_, "Unsqueeze")[0])[0]
    if len(n.input) != 1 or attr(n, "axes") is None:
        return "axes is not an attribute"
    return None if not out.graph.initializer else "the axes initializer stayed"


case("squeeze11", squeeze_model(11), 13, axes_input, {"x": randn(2, 1, 3, 1)},
     zero={"x": randn(0, 1, 3, 1)})
case("squeeze11", squeeze_model(11), 21, axes_input)
case("squeeze13", squeeze_model(13), 11, axes_attr, {"x": randn(2, 1, 3, 1)})
case("squeeze21", squeeze_model(21), 12, axes_attr)

un11 = model([h.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 3])], [vi("x", T.FLOAT, ["N", 4])],
             [vi("y", T.FLOAT, [1, "N", 4, 1])], 11)
case("unsqueeze11", un11, 13, axes_input, {"x": randn(3, 4)})
un13 = model([h.make_node("Unsqueeze", ["x", "axes"], ["y"])], [vi("x", T.FLOAT, ["N", 4])],
             [vi("y", T.FLOAT, [1, "N", 4, 1])], 13, [ints("axes", [0, 3])])
case("unsqueeze13", un13, 11, axes_attr, {"x": randn(3, 4)})
# axes that are not a constant cannot become an attribute
un13v = model([h.make_node("Unsqueeze", ["x", "axes"], ["y"])],
              [vi("x", T.FLOAT, ["N", 4]), vi("axes", T.INT64, [2])],
              [vi("y", T.FLOAT, None)], 13)
refused("unsqueeze13_input_axes", un13v, 11, "Unsqueeze", "not a constant")


# ---- ReduceSum (13) and ReduceMax (18): axes ---------------------------------------------
def reduce_model(op, opset, with_axes_input, keepdims=0, axes=(1,)):
    x = vi("x", T.FLOAT, ["N", 5, 3])
    y = vi("y", T.FLOAT, None)
    if with_axes_input:
        n = h.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)
        return model([n], [x], [y], opset, [ints("axes", list(axes))])
    n = h.make_node(op, ["x"], ["y"], axes=list(axes), keepdims=keepdims)
    return model([n], [x], [y], opset)


def reduce_form(op, as_input):
    def f(out, path):
        n = node_of(path, op)[0]
        if len(n) != 1:
            return "no %s" % op
        n = n[0]
        if as_input:
            return None if len(n.input) == 2 and attr(n, "axes") is None else "axes not input"
        return None if len(n.input) == 1 and attr(n, "axes") is not None else "axes not attr"
    return f


X = {"x": randn(2, 5, 3)}
case("reducesum11", reduce_model("ReduceSum", 11, False), 13, reduce_form("ReduceSum", True), X,
     zero={"x": randn(0, 5, 3)})
case("reducesum13", reduce_model("ReduceSum", 13, True, 1, (-1,)), 12,
     reduce_form("ReduceSum", False), X)
case("reducemax13", reduce_model("ReduceMax", 13, False, 1), 18, reduce_form("ReduceMax", True), X)
case("reducemax18", reduce_model("ReduceMax", 18, True), 17, reduce_form("ReduceMax", False), X)
case("reducemean18", reduce_model("ReduceMean", 18, True, 0, (0, 2)), 11,
     reduce_form("ReduceMean", False), X)
# ReduceSum-13 without axes reduces everything: so does ReduceSum-11 without the attribute
rs_all = model([h.make_node("ReduceSum", ["x"], ["y"], keepdims=0)],
               [vi("x", T.FLOAT, ["N", 5, 3])], [vi("y", T.FLOAT, None)], 13)
case("reducesum13_all", rs_all, 11,
     lambda o, p: None if len(o.graph.node[0].input) == 1 and
     attr(o.graph.node[0], "axes") is None else "axes given", X)
rs_noop = model([h.make_node("ReduceSum", ["x"], ["y"], keepdims=0, noop_with_empty_axes=1)],
                [vi("x", T.FLOAT, ["N", 5, 3])], [vi("y", T.FLOAT, None)], 13)
refused("reducesum13_noop", rs_noop, 11, "ReduceSum", "noop_with_empty_axes")


# ---- Split: split attribute <-> input (13), num_outputs (18) -------------------------------
def split_form(want_input, want_num):
    def f(out, path):
        n = node_of(path, "Split")[0][0]
        has_in = len(n.input) > 1 and n.input[1] != ""
        if has_in != want_input:
            return "split input %s" % has_in
        if want_input is False and want_num is None and attr(n, "split") is None:
            return "no split attribute"
        if (attr(n, "num_outputs") is not None) != bool(want_num):
            return "num_outputs %s" % attr(n, "num_outputs")
        return None
    return f


sp11 = model([h.make_node("Split", ["x"], ["a", "b"], axis=1, split=[2, 5])],
             [vi("x", T.FLOAT, ["N", 7])], [vi("a", T.FLOAT, None), vi("b", T.FLOAT, None)], 11)
XS = {"x": randn(3, 7)}
case("split11_sizes", sp11, 13, split_form(True, None), XS, zero={"x": randn(0, 7)})
case("split11_sizes", sp11, 18, split_form(True, None), XS)
sp18 = model([h.make_node("Split", ["x", "s"], ["a", "b"], axis=1)],
             [vi("x", T.FLOAT, ["N", 7])], [vi("a", T.FLOAT, None), vi("b", T.FLOAT, None)], 18,
             [ints("s", [4, 3])])
case("split18_sizes", sp18, 11, split_form(False, None), XS)
sp11e = model([h.make_node("Split", ["x"], ["a", "b", "c"], axis=-1)],
              [vi("x", T.FLOAT, ["N", 6])], [vi(k, T.FLOAT, None) for k in "abc"], 11)
case("split11_even", sp11e, 18, split_form(False, True), {"x": randn(2, 6)})
# 18's uneven num_outputs split: sizes written for the older opsets (7 = 3 + 3 + 1)
sp18u = model([h.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
              [vi("x", T.FLOAT, ["N", 7])], [vi(k, T.FLOAT, None) for k in "abc"], 18)
case("split18_uneven", sp18u, 13, split_form(True, None), XS)
case("split18_uneven", sp18u, 11, split_form(False, None), XS)
sp18e = model([h.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2)],
              [vi("x", T.FLOAT, [4, "M"])], [vi(k, T.FLOAT, None) for k in "ab"], 18)
case("split18_even", sp18e, 11, split_form(False, False), {"x": randn(4, 3)})
sp18d = model([h.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)],
              [vi("x", T.FLOAT, [4, "M"])], [vi(k, T.FLOAT, None) for k in "ab"], 18)
refused("split18_dynamic", sp18d, 13, "Split", "not known")


# ---- Softmax family: the 2-D coercion before 13 -----------------------------------------
def sm_model(op, opset, axis, shape=("N", 3, 4)):
    kw = {} if axis is None else {"axis": axis}
    return model([h.make_node(op, ["x"], ["y"], **kw)], [vi("x", T.FLOAT, list(shape))],
                 [vi("y", T.FLOAT, list(shape))], opset)


def ops_are(*want):
    def f(out, path):
        got = sorted(n.op_type for n in out.graph.node)
        return None if got == sorted(want) else "nodes %s" % got
    return f


XM = {"x": randn(2, 3, 4)}
for op in ("Softmax", "LogSoftmax", "Hardmax"):
    # axis 2 of a rank-3 input is the last: the same in both meanings
    case("%s11_last" % op, sm_model(op, 11, 2), 13, ops_are(op), XM)
    # axis 1 (the old default) coerces [N, 3*4]: Flatten, the op, Reshape back
    case("%s11_axis1" % op, sm_model(op, 11, None), 13,
         ops_are("Shape", "Flatten", op, "Reshape"), XM, zero={"x": randn(0, 3, 4)})
    # the new default (-1) is the last axis in both
    case("%s13_default" % op, sm_model(op, 13, None), 11, ops_are(op), XM)
    # axis 1 of 13 moved last by Transposes
    case("%s13_axis1" % op, sm_model(op, 13, 1), 11, ops_are("Transpose", op, "Transpose"), XM,
         zero={"x": randn(0, 3, 4)})
    case("%s13_axis0" % op, sm_model(op, 13, 0), 12, ops_are("Transpose", op, "Transpose"), XM)
# rank unknown: up works through Flatten, down to a non-last axis cannot
case("softmax11_norank", model([h.make_node("Softmax", ["x"], ["y"], axis=1)],
                               [vi("x", T.FLOAT, None)], [vi("y", T.FLOAT, None)], 11), 13,
     ops_are("Shape", "Flatten", "Softmax", "Reshape"), {"x": randn(2, 3, 4)}, runs=0)
refused("softmax13_norank", model([h.make_node("Softmax", ["x"], ["y"], axis=1)],
                                  [vi("x", T.FLOAT, None)], [vi("y", T.FLOAT, None)], 13), 11,
        "Softmax", "rank is not known")


# ---- Clip (attributes before 11), Pad (inputs from 11, axes from 18), TopK, Dropout ------
clip6 = model([h.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.7)],
              [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 4])], 6)
case("clip6", clip6, 11, lambda o, p: None if len(o.graph.node[0].input) == 3 else "inputs",
     {"x": randn(3, 4)})
clip13 = model([h.make_node("Clip", ["x", "", "hi"], ["y"])],
               [vi("x", T.FLOAT, ["N", 4])], [vi("y", T.FLOAT, ["N", 4])], 13,
               [nh.from_array(np.array(0.25, np.float32), "hi")])
case("clip13_max_only", clip13, 7,
     lambda o, p: None if attr(o.graph.node[0], "max") == 0.25 and
     attr(o.graph.node[0], "min") is None and len(o.graph.node[0].input) == 1 else "attrs",
     None)
pad2 = model([h.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 2], value=1.5)],
             [vi("x", T.FLOAT, ["N", 3])], [vi("y", T.FLOAT, None)], 7)
case("pad7", pad2, 11, lambda o, p: None if len(o.graph.node[0].input) == 3 else "inputs",
     {"x": randn(2, 3)})
pad18 = model([h.make_node("Pad", ["x", "p", "", "ax"], ["y"], mode="reflect")],
              [vi("x", T.FLOAT, ["N", 5, 4])], [vi("y", T.FLOAT, None)], 18,
              [ints("p", [1, 2]), ints("ax", [-1])])
case("pad18_axes", pad18, 13,
     lambda o, p: None if len(o.graph.node[0].input) == 2 else "axes input stayed",
     {"x": randn(2, 5, 4)})
case("pad18_axes", pad18, 11, lambda o, p: None)
pad19w = model([h.make_node("Pad", ["x", "p"], ["y"], mode="wrap")],
               [vi("x", T.FLOAT, ["N", 5])], [vi("y", T.FLOAT, None)], 19,
               [ints("p", [0, 1, 0, 1])])
refused("pad19_wrap", pad19w, 18, "Pad", "wrap")
topk1 = model([h.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1)],
              [vi("x", T.FLOAT, ["N", 6])], [vi("v", T.FLOAT, None), vi("i", T.INT64, None)], 7)
case("topk7", topk1, 11, lambda o, p: None if len(o.graph.node[0].input) == 2 else "inputs",
     {"x": randn(3, 6)})
topk11s = model([h.make_node("TopK", ["x", "k"], ["v", "i"], largest=0)],
                [vi("x", T.FLOAT, ["N", 6])], [vi("v", T.FLOAT, None), vi("i", T.INT64, None)],
                11, [ints("k", [2])])
refused("topk11_smallest", topk11s, 10, "TopK", "largest")
drop10 = model([h.make_node("Dropout", ["x"], ["y"], ratio=0.3)],
               [vi("x", T.FLOAT, ["N", 6])], [vi("y", T.FLOAT, None)], 10)
case("dropout10", drop10, 13, lambda o, p: None, {"x": randn(3, 6)})
drop13 = model([h.make_node("Dropout", ["x", "r"], ["y"])],
               [vi("x", T.FLOAT, ["N", 6])], [vi("y", T.FLOAT, None)], 13,
               [nh.from_array(np.array(0.2, np.float32), "r")])
case("dropout13", drop13, 10,
     lambda o, p: None if abs(attr(o.graph.node[0], "ratio") - 0.2) < 1e-7 else "ratio")


# ---- Resize / Upsample ------------------------------------------------------------------
def rs_model(opset, inputs, inits, **kw):
    return model([h.make_node("Resize", inputs, ["y"], **kw)],
                 [vi("x", T.FLOAT, ["N", 2, 3, 4])], [vi("y", T.FLOAT, None)], opset, inits)


sc = nh.from_array(np.array([1, 1, 2, 1.5], np.float32), "sc")
XR = {"x": randn(1, 2, 3, 4)}
rs13 = rs_model(13, ["x", "", "sc"], [sc], mode="linear")
case("resize13_noroi", rs13, 11,
     lambda o, p: None if len(o.graph.node[0].input) == 3 and o.graph.node[0].input[1] else
     "roi not given", XR)
rs10 = rs_model(10, ["x", "sc"], [sc], mode="nearest")
case("resize10", rs10, 13, lambda o, p: None if attr(o.graph.node[0],
     "coordinate_transformation_mode") == b"asymmetric" else "mode", XR)
rs13a = rs_model(13, ["x", "", "sc"], [sc], mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor")
case("resize13_asym", rs13a, 10, lambda o, p: None if len(o.graph.node[0].input) == 2 else "in")
rs19 = rs_model(19, ["x", "", "sc"], [sc], mode="linear",
                coordinate_transformation_mode="half_pixel_symmetric")
refused("resize19_hps", rs19, 18, "Resize", "half_pixel_symmetric")
rs18a = rs_model(18, ["x", "", "sc"], [sc], mode="linear", antialias=1)
refused("resize18_antialias", rs18a, 17, "Resize", "antialias")
case("resize18_plain", rs_model(18, ["x", "", "sc"], [sc], mode="cubic", antialias=0), 13,
     lambda o, p: None if attr(o.graph.node[0], "antialias") is None else "antialias", XR)
up9 = model([h.make_node("Upsample", ["x", "sc"], ["y"], mode="nearest")],
            [vi("x", T.FLOAT, ["N", 2, 3, 4])], [vi("y", T.FLOAT, None)], 9, [sc])
case("upsample9", up9, 11, ops_are("Resize"))
case("upsample9", up9, 13, ops_are("Resize"))
up7 = model([h.make_node("Upsample", ["x"], ["y"], mode="linear", scales=[1.0, 1.0, 2.0, 2.0])],
            [vi("x", T.FLOAT, ["N", 2, 3, 4])], [vi("y", T.FLOAT, None)], 7)
case("upsample7", up7, 13, ops_are("Resize"))


# ---- rows whose added attributes hold their default; Trilu lowered; types the target lacks
bn = model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
           [vi("x", T.FLOAT, ["N", 3, 2])], [vi("y", T.FLOAT, None)], 15,
           [nh.from_array(randn(3), k) for k in "sbm"] +
           [nh.from_array(np.abs(randn(3)) + 0.5, "v")])
case("batchnorm15", bn, 9, lambda o, p: None, {"x": randn(2, 3, 2)})
bnt = model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                         training_mode=1)],
            [vi("x", T.FLOAT, ["N", 3, 2])], [vi("y", T.FLOAT, None)], 15,
            [nh.from_array(randn(3), k) for k in "sbmv"])
refused("batchnorm15_training", bnt, 13, "BatchNormalization", "training_mode")
for upper in (0, 1):
    tr = model([h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)],
               [vi("x", T.FLOAT, ["B", "N", "M"])], [vi("y", T.FLOAT, None)], 14,
               [ints("k", 1 - 2 * upper)])
    case("trilu14_upper%d" % upper, tr, 11,
         ops_are("Shape", "Gather", "Gather", "Range", "Range", "Reshape", "Sub",
                 "Greater" if not upper else "Less", "Not", "Where"),
         {"x": randn(2, 3, 5)}, zero={"x": randn(2, 0, 5)})
bf = model([h.make_node("Cast", ["x"], ["y"], to=T.BFLOAT16),
            h.make_node("Cast", ["y"], ["z"], to=T.FLOAT)],
           [vi("x", T.FLOAT, ["N"])], [vi("z", T.FLOAT, ["N"])], 13)
refused("cast_bfloat16", bf, 12, "Cast", "element type 16")
gn = model([h.make_node("GridSample", ["x", "g"], ["y"])],
           [vi("x", T.FLOAT, [1, 1, 3, 3]), vi("g", T.FLOAT, [1, 2, 2, 2])],
           [vi("y", T.FLOAT, None)], 16)
refused("gridsample16", gn, 13, "GridSample", "does not exist at the target")
# a plain op across every opset: only the import changes
relu = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, ["N"])],
             [vi("y", T.FLOAT, ["N"])], 11)
case("relu11", relu, 21, ops_are("Relu"), {"x": randn(5)})
case("relu11", relu, 7, ops_are("Relu"))
# other domains' imports stay
ml = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, ["N"])],
           [vi("y", T.FLOAT, ["N"])], 11)
ml.opset_import.append(h.make_opsetid("ai.onnx.ml", 3))
p, _, dst = convert(ml, 17, "ml_import")
check(p.returncode == 0 and {(o.domain, o.version) for o in onnx.load(dst).opset_import} ==
      {("", 17), ("ai.onnx.ml", 3)}, "ai.onnx.ml import untouched")
p, _, _ = convert(relu, 30, "relu_bad_opset")
check(p.returncode == 2 and "--opset" in p.stderr, "--opset 30 is a usage error")

if not HAVE_ORT:
    print("note: the ONNX Runtime runs were skipped (%s)" % (
        "--no-ort" if NO_ORT else "../shared/oracle or ~/.cache/om-oracle is missing"))
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
