#!/usr/bin/env python3
"""check_viewer.py OMOPT — `omopt dot -o FILE.html` in a real browser.

Makes a 2,000-node model (200 repeated blocks of 10 nodes, names /blocks.K/Op) with
onnx.helper, writes its page with `omopt dot`, checks the page holds everything itself (no
http/https reference), and runs tests/viewer_test.js in headless Chromium through
playwright-core: search a node by name (it must be the highlighted match, on screen), click
it (its attributes and inputs shown), collapse the repeated blocks, screenshot
(viewer.png in the build's meson-logs folder, or $TMPDIR). Exit 77 (skipped, saying what is
missing) without chromium (Debian's, /usr/bin/chromium, or CHROMIUM=path), node,
playwright-core (scripts/install-viewer.sh puts it in ~/.cache/om-viewer; or
PLAYWRIGHT_CORE=path) or numpy/onnx. scripts/test.sh installs chromium and playwright-core.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


try:
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
except ImportError as e:
    skip(f"numpy and onnx are needed ({e})")

OMOPT = os.path.abspath(sys.argv[1])
# Debian's chromium (scripts/test.sh installs it), also when /usr/bin is not on the PATH
chromium = (os.environ.get("CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser")
            or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None))
if not chromium:
    skip("no chromium (apt-get install chromium; or CHROMIUM=path)")
node = shutil.which("node")
if not node:
    skip("no node (Node.js)")
pw = os.environ.get("PLAYWRIGHT_CORE") or os.path.expanduser(
    "~/.cache/om-viewer/node_modules/playwright-core")
if not os.path.isdir(pw):
    skip(f"no playwright-core at {pw} (sh scripts/install-viewer.sh)")


def big_model(path, blocks=200):
    nodes, inits, x = [], [], "x"
    for b in range(blocks):
        p = f"/blocks.{b}"
        inits.append(nh.from_array(np.full((16, 16), 0.01, np.float32), f"{p}/W"))
        nodes += [
            h.make_node("MatMul", [x, f"{p}/W"], [f"{p}/mm"], name=f"{p}/MatMul"),
            h.make_node("Relu", [f"{p}/mm"], [f"{p}/r"], name=f"{p}/Relu"),
            h.make_node("Sigmoid", [f"{p}/r"], [f"{p}/s"], name=f"{p}/Sigmoid"),
            h.make_node("Mul", [f"{p}/r", f"{p}/s"], [f"{p}/m"], name=f"{p}/Mul"),
            h.make_node("Add", [f"{p}/m", x], [f"{p}/a"], name=f"{p}/Add"),
            h.make_node("Tanh", [f"{p}/a"], [f"{p}/t"], name=f"{p}/Tanh"),
            h.make_node("Abs", [f"{p}/t"], [f"{p}/ab"], name=f"{p}/Abs"),
            h.make_node("Neg", [f"{p}/ab"], [f"{p}/n"], name=f"{p}/Neg"),
            h.make_node("Sub", [f"{p}/t", f"{p}/n"], [f"{p}/sb"], name=f"{p}/Sub"),
            h.make_node("Softmax", [f"{p}/sb"], [f"{p}/o"], name=f"{p}/Softmax", axis=-1)]
        x = f"{p}/o"
    g = h.make_graph(nodes, "blocks", [h.make_tensor_value_info("x", T.FLOAT, ["N", 16])],
                     [h.make_tensor_value_info(x, T.FLOAT, ["N", 16])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return len(nodes)


def main():
    out_dir = os.environ.get("MESON_BUILD_ROOT")
    with tempfile.TemporaryDirectory() as d:
        model, page = os.path.join(d, "blocks.onnx"), os.path.join(d, "blocks.html")
        n = big_model(model)
        t0 = time.time()
        p = subprocess.run([OMOPT, "dot", model, "-o", page], capture_output=True, text=True)
        t_dot = time.time() - t0
        if p.returncode:
            print("FAIL: omopt dot: " + p.stderr)
            return 1
        html = open(page, encoding="utf-8").read()
        bad = [w for w in ("http://", "https://", "<script src", "<link ") if w in html.replace(
            "http://www.w3.org/", "")]
        if bad:
            print(f"FAIL: the page refers to {bad}")
            return 1
        shot_dir = os.path.join(out_dir, "meson-logs") if out_dir else d
        shot = os.path.join(shot_dir if os.path.isdir(shot_dir) else d, "viewer.png")
        env = dict(os.environ, CHROMIUM=chromium, PLAYWRIGHT_CORE=pw)
        js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "viewer_test.js")
        t0 = time.time()
        q = subprocess.run([node, js, page, shot, "/blocks.137/Sigmoid"], capture_output=True,
                           text=True, env=env, timeout=120)
        print(f"{n} nodes, page {len(html) // 1024} KiB, omopt dot {t_dot:.1f} s, "
              f"browser {time.time() - t0:.1f} s")
        print(q.stdout.strip() or q.stderr.strip())
        if q.returncode:
            print("FAIL")
            return 1
        size = os.path.getsize(shot) if os.path.exists(shot) else 0
        print(f"screenshot {shot} ({size} bytes)")
        return 0 if size > 10000 else 1


if __name__ == "__main__":
    sys.exit(main())
