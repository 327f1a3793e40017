#!/usr/bin/env python3
"""check_cli_compat.py — `omopt simplify` with the flags of onnxsim and OnnxSlim; `omopt run`'s
cleanup after a failure.

    check_cli_compat.py OMOPT

Builds small models with onnx.helper, runs the command with onnxsim's and OnnxSlim's spellings
(--overwrite-input-shape / --input-shapes with several shapes after one flag, a name-less shape,
a declared fixed dim overwritten, --skip with a comma list and `all`, --skip-optimization,
onnxsim's third positional check_n, --outputs NAME:DTYPE) and checks the exit codes, the
messages, the written shapes, and the 320 model's outputs (`omopt run`) against the original
graph computed in numpy. Exit 0 when all pass, 1 when one fails, 77 (skipped) without
numpy/onnx.
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
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    p = subprocess.run([OMOPT, "simplify", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def dims(vi):
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in vi.type.tensor_type.shape.dim]


def shapes_of(path):
    m = onnx.load(path)
    return {v.name: dims(v) for v in
            list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info)}


def conv_model(path):
    """image [1,3,224,224] -> Conv(pad 1) -> BatchNormalization -> Relu (output r) ->
    GlobalAveragePool (output pool); b [N,10] -> Add(b, b) -> b2. value_info says c is
    [1,8,224,224]: stale once image is 320."""
    rng = np.random.default_rng(0)
    inits = [nh.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "W"),
             nh.from_array(rng.random(8).astype(np.float32) + 0.5, "scale"),
             nh.from_array(rng.standard_normal(8).astype(np.float32), "bias"),
             nh.from_array(rng.standard_normal(8).astype(np.float32), "mean"),
             nh.from_array(rng.random(8).astype(np.float32) + 0.5, "var")]
    nodes = [h.make_node("Conv", ["image", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"],
                         name="bn"),
             h.make_node("Relu", ["n"], ["r"], name="relu"),
             h.make_node("GlobalAveragePool", ["r"], ["pool"], name="gap"),
             h.make_node("Add", ["b", "b"], ["b2"], name="addb")]
    g = h.make_graph(
        nodes, "g",
        [h.make_tensor_value_info("image", T.FLOAT, [1, 3, 224, 224]),
         h.make_tensor_value_info("b", T.FLOAT, ["N", 10])],
        [h.make_tensor_value_info("pool", T.FLOAT, [1, 8, 1, 1]),
         h.make_tensor_value_info("r", T.FLOAT, [1, 8, 224, 224]),
         h.make_tensor_value_info("b2", T.FLOAT, ["N", 10])],
        inits, value_info=[h.make_tensor_value_info("c", T.FLOAT, [1, 8, 224, 224])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def one_input_model(path):
    """x [1,4] -> Relu -> Add(., 1) -> y"""
    one = nh.from_array(np.ones((1, 4), np.float32), "one")
    g = h.make_graph([h.make_node("Relu", ["x"], ["t"]), h.make_node("Add", ["t", "one"], ["y"])],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["B", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["B", 4])], [one])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def reference(path, feed):
    """conv_model's graph in numpy on feed: {output name: array}."""
    w = {i.name: nh.to_array(i) for i in onnx.load(path).graph.initializer}
    x = np.pad(feed["image"].astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    hh, ww = x.shape[2] - 2, x.shape[3] - 2
    c = np.zeros((1, 8, hh, ww))
    for dy in range(3):
        for dx in range(3):
            c += np.einsum("oc,nchw->nohw", w["W"][:, :, dy, dx], x[:, :, dy:dy + hh, dx:dx + ww])
    k = lambda v: w[v].reshape(1, 8, 1, 1)
    n = (c - k("mean")) / np.sqrt(k("var") + 1e-5) * k("scale") + k("bias")
    r = np.maximum(n, 0)
    return {"pool": r.mean(axis=(2, 3), keepdims=True), "r": r, "b2": feed["b"] * 2}


def run_model(d, path, feed):
    """`omopt run` of path on feed: {output name: array}."""
    args = [OMOPT, "run", path, "--output-dir", os.path.join(d, "o"), "--output-format", "npy"]
    for name, v in feed.items():
        np.save(os.path.join(d, name + ".npy"), v)
        args += ["--input", f"{name}={os.path.join(d, name + '.npy')}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        print(p.stderr)
        return {}
    o = os.path.join(d, "o")
    names = [v.name for v in onnx.load(path).graph.output]
    return {n: np.load(os.path.join(o, f"output_{i}.npy")) for i, n in enumerate(names)}


def main():
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "conv.onnx"), os.path.join(d, "out.onnx")
        conv_model(src)

        # onnxsim: several shapes after one flag, a fixed dim overwritten (warned)
        rc, _, err = run(src, out, "--overwrite-input-shape", "image:1,3,320,320", "b:2,10")
        check(rc == 0, f"--overwrite-input-shape with two shapes: exit 0 (got {rc}: {err})")
        check("input 'image' dim 2 is declared 224 and becomes 320" in err,
              "the overwritten fixed dim is warned about")
        s = shapes_of(out)
        check(s.get("image") == [1, 3, 320, 320] and s.get("b") == [2, 10],
              f"inputs take the shapes given: {s.get('image')} {s.get('b')}")
        check(s.get("r") == [1, 8, 320, 320] and s.get("pool") == [1, 8, 1, 1],
              f"outputs inferred again from 320: r {s.get('r')} pool {s.get('pool')}")
        check(s.get("c") in (None, [1, 8, 320, 320]), f"no stale value_info for c: {s.get('c')}")
        rng = np.random.default_rng(1)
        feed = {"image": rng.standard_normal((1, 3, 320, 320)).astype(np.float32),
                "b": rng.standard_normal((2, 10)).astype(np.float32)}
        want = reference(src, feed)
        got = run_model(d, out, feed)
        ok = all(np.allclose(want[k], got[k], rtol=1e-4, atol=1e-4) for k in want)
        check(ok and got["r"].shape == (1, 8, 320, 320),
              "the 320 model computes what the original graph does on a 320 image")

        # OnnxSlim's spelling of the same, and the other spelling's rank check still holds
        rc, _, err = run(src, out, "--input-shapes", "image:1,3,320,320", "b:2,10")
        check(rc == 0 and shapes_of(out).get("b") == [2, 10], f"--input-shapes: exit {rc}")
        rc, _, err = run(src, out, "--input-shape", "image:1,3,320")
        check(rc == 1 and "rank 3" in err, f"a wrong rank is still an error: {rc} {err.strip()}")

        # a name-less shape: the model's one input; refused on a model of two
        one = os.path.join(d, "one.onnx")
        one_input_model(one)
        rc, _, err = run(one, out, "--overwrite-input-shape", "3,4")
        check(rc == 0 and shapes_of(out).get("x") == [3, 4] and shapes_of(out).get("y") == [3, 4],
              f"a name-less shape names the one input: {rc} {err.strip()}")
        rc, _, err = run(src, out, "--overwrite-input-shape", "1,3,224,224")
        check(rc == 1 and "has 2" in err, f"a name-less shape on two inputs: {rc} {err.strip()}")

        # --skip lists
        rc, so, _ = run(src, out, "--skip", "fuse_conv_bn,merge_common")
        ops = [n.op_type for n in onnx.load(out).graph.node]
        check(rc == 0 and "BatchNormalization" in ops, f"--skip a,b keeps the BN: {ops}")
        rc, so, _ = run(src, out)
        ops = [n.op_type for n in onnx.load(out).graph.node]
        check(rc == 0 and "BatchNormalization" not in ops, f"without --skip the BN goes: {ops}")
        rc, _, _ = run(src, out, "--skip", "all")
        ops = [n.op_type for n in onnx.load(out).graph.node]
        check(rc == 0 and len(ops) == 5, f"--skip all rewrites nothing: {ops}")
        rc, _, err = run(src, out, "--skip", "fuse_conv_bn,nope")
        check(rc == 2 and "no pass named 'nope'" in err, f"--skip of an unknown pass: {rc}")
        rc, _, _ = run(src, out, "--skip-optimization")
        ops = [n.op_type for n in onnx.load(out).graph.node]
        check(rc == 0 and "BatchNormalization" in ops, f"--skip-optimization fuses nothing: {ops}")
        rc, _, _ = run(src, out, "--skip-fuse-bn")
        ops = [n.op_type for n in onnx.load(out).graph.node]
        check(rc == 0 and "BatchNormalization" in ops, f"--skip-fuse-bn keeps the BN: {ops}")

        # onnxsim's positional check_n
        rc, so, _ = run(src, out, "2")
        check(rc == 0 and "check: passed" in so,
              f"a third argument N checks: exit {rc}")
        rc, _, err = run(src, out, "2", "3")
        check(rc == 2, f"a fourth argument is refused: {rc}")

        # OnnxSlim's --outputs NAME:DTYPE, several after one flag
        rc, _, err = run(src, out, "--outputs", "pool:float32", "b2:float32")
        outs = [o.name for o in onnx.load(out).graph.output]
        check(rc == 0 and outs == ["pool", "b2"], f"--outputs a:float32 b:float32: {rc} {outs}")
        rc, _, err = run(src, out, "--outputs", "pool:int64")
        check(rc == 1 and "not the int64" in err, f"--outputs of another dtype: {rc}")
        # a failed run leaves no folder it created behind, and keeps one that was there
        p = subprocess.run([OMOPT, "run", src, "--output-dir", os.path.join(d, "new", "sub"),
                            "--input", "image=" + os.path.join(d, "missing.npy")],
                           capture_output=True, text=True)
        check(p.returncode == 1 and not os.path.exists(os.path.join(d, "new")),
              f"a failed run removes the --output-dir it made: {p.returncode}")
        os.mkdir(os.path.join(d, "had"))
        p = subprocess.run([OMOPT, "run", src, "--output-dir", os.path.join(d, "had", "sub"),
                            "--input", "image=" + os.path.join(d, "missing.npy")],
                           capture_output=True, text=True)
        check(p.returncode == 1 and os.listdir(os.path.join(d, "had")) == [],
              "... and only the folders it made")
    if failures:
        print(f"{len(failures)} failed")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
