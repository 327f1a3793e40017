#!/bin/sh
# The main job on the bundled example: install, build, simplify examples/tiny_shuffle.onnx,
# run both models on the same input and draw the simplified plan.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
[ -d build ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
mkdir -p out
./build/tools/omopt simplify examples/tiny_shuffle.onnx out/tiny_shuffle.simplified.onnx
