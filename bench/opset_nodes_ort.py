#!/usr/bin/python3
"""opset_nodes_ort.py — ONNX node tests converted by omopt to another opset, run in ONNX Runtime.

usage: bench/opset_nodes_ort.py [--omopt build/tools/omopt] [--opsets 11,21] [--stride K]
                                [CASES_DIR] [PREFIX...]

For each case folder under CASES_DIR (default ../shared/conformance/onnx-node-1.23) whose name
starts with one of PREFIX (default: the ops whose signature changed between 11 and 21), the
model is converted with `omopt simplify --skip all --opset N` (no rewrite but the conversion),
run in ONNX Runtime 1.30 (the oracle) on test_data_set_0's inputs, and compared with its
expected outputs (the backend tolerances: rtol 1e-3, atol 1e-7). Prints one line per case
that is not 'ok' and the counts per opset: ok, refused (omopt wrote nothing, naming the node),
skipped (inputs or outputs ONNX Runtime or this onnx package cannot hold), ort-differs (ONNX
Runtime's outputs differ from the expected ones on the original model too: not the
conversion's doing), and failed (ORT refused the converted model, or its outputs differ where
the original's match). Exit 1 when one failed.
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PREFIXES = ["test_squeeze", "test_unsqueeze", "test_reduce_", "test_split", "test_softmax",
            "test_logsoftmax", "test_hardmax", "test_resize", "test_upsample", "test_constant_pad",
            "test_edge_pad", "test_reflect_pad", "test_wrap_pad", "test_clip", "test_batchnorm",
            "test_dropout", "test_top_k", "test_scatter", "test_slice", "test_tril",
            "test_triu", "test_roialign", "test_gathernd", "test_shape", "test_castlike",
            "test_greater_equal", "test_less_equal", "test_constant", "test_dft"]
NPY_OK = {np.float32, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
          np.int64, np.uint64, np.bool_, np.float16}


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    a = numpy_helper.to_array(t)
    if a.dtype.type not in NPY_OK:
        raise ValueError("element type %s" % a.dtype)
    return t.name, a


def ort_check(oracle, model, m, ins, outs, tmp):
    """None when ONNX Runtime's outputs of `model` match `outs`, else why not."""
    args = ["node", oracle, model, os.path.join(tmp, "o")]
    for (_, a), vi in zip(ins, m.graph.input):
        f = os.path.join(tmp, vi.name.replace("/", "_") + ".npy")
        np.save(f, a)
        args.append("%s=%s" % (vi.name, f))
    os.makedirs(os.path.join(tmp, "o"), exist_ok=True)
    for f in glob.glob(os.path.join(tmp, "o", "*.npy")):
        os.remove(f)
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.expanduser("~/.cache/om-oracle/node_modules"))
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    if p.returncode:
        return "ORT: " + (p.stderr.strip().splitlines() or ["?"])[-1][:200]
    for i, want in enumerate(outs):
        got = np.load(os.path.join(tmp, "o", "%d.npy" % i))
        if got.shape != want.shape:
            return "output %d shape %s, expected %s" % (i, got.shape, want.shape)
        if want.dtype.kind in "fc":
            if not np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True):
                return "output %d differs" % i
        elif not np.array_equal(got, want):
            return "output %d differs" % i
    return None


def run(omopt, oracle, case, opset, tmp):
    ds = os.path.join(case, "test_data_set_0")
    m = onnx.load(os.path.join(case, "model.onnx"))
    try:
        ins = [read_pb(f) for f in sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                                          key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        outs = [read_pb(f)[1] for f in sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                                              key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
    except Exception as e:  # sequences, optionals, float8, bfloat16 in onnx 1.12
        return "skipped", str(e)[:80]
    if len(ins) != len(m.graph.input) or not outs:
        return "skipped", "inputs"
    out = os.path.join(tmp, "m.onnx")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([omopt, "simplify", os.path.join(case, "model.onnx"), out, "--skip", "all",
                        "--opset", str(opset)], capture_output=True, text=True)
    if p.returncode:
        return "refused", (p.stderr.strip().splitlines() or ["?"])[-1][:160]
    why = ort_check(oracle, out, m, ins, outs, tmp)
    if why is None:
        return "ok", ""
    if ort_check(oracle, os.path.join(case, "model.onnx"), m, ins, outs, tmp) is not None:
        return "ort-differs", why + " (ONNX Runtime differs on the original too)"
    return "failed", why


def main(argv):
    omopt = os.path.join(ROOT, "build", "tools", "omopt")
    opsets, stride, rest = [11, 21], 1, []
    i = 0
    while i < len(argv):
        if argv[i] in ("--omopt", "--opsets", "--stride"):
            v = argv[i + 1]
            if argv[i] == "--omopt":
                omopt = v
            elif argv[i] == "--opsets":
                opsets = [int(x) for x in v.split(",")]
            else:
                stride = int(v)
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    shared = os.environ.get("OMOPT_SHARED") or os.path.join(ROOT, "..", "shared")
    cases_dir = rest[0] if rest else os.path.join(shared, "conformance", "onnx-node-1.23")
    prefixes = rest[1:] or PREFIXES
    oracle = os.path.join(shared, "oracle", "ort_run.js")
    if not os.path.isdir(cases_dir) or not os.path.isfile(oracle):
        print("SKIP: %s or the oracle (%s) is missing" % (cases_dir, oracle))
        return 77
    cases = sorted(c for c in os.listdir(cases_dir)
                   if any(c.startswith(p) for p in prefixes) and
                   os.path.isfile(os.path.join(cases_dir, c, "model.onnx")))[::stride]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for o in opsets:
            counts = {}
            for c in cases:
                r, why = run(omopt, oracle, os.path.join(cases_dir, c), o, tmp)
                counts[r] = counts.get(r, 0) + 1
                if r != "ok":
                    print("%-8s %2d %s: %s" % (r, o, c, why), flush=True)
                failed += r == "failed"
            print("opset %d: %d cases: %s" % (o, len(cases), ", ".join(
                "%d %s" % (v, k) for k, v in sorted(counts.items()))), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
