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
# the picture in the README: the simplified model drawn by omopt itself
./build/tools/omopt dot out/tiny_shuffle.simplified.onnx -o docs/img/tiny_shuffle_simplified.svg
./build/tools/omopt dot examples/tiny_shuffle.onnx --diff out/tiny_shuffle.simplified.onnx \
	-o out/tiny_shuffle.diff.svg
echo "drawn: docs/img/tiny_shuffle_simplified.svg, out/tiny_shuffle.diff.svg"
