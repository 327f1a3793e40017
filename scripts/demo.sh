#!/bin/sh
# The main job on the bundled example: install, build, simplify examples/tiny_shuffle.onnx,
# and draw the simplified model and the change.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
[ -d build ] || meson setup build >/dev/null
# only what the demo runs: the omopt command (scripts/test.sh builds the tests)
ninja -C build tools/omopt >build.log 2>&1 ||
	{ cat build.log; echo "demo: the build failed (build.log)"; exit 1; }
mkdir -p out
./build/tools/omopt simplify examples/tiny_shuffle.onnx out/tiny_shuffle.simplified.onnx
# the picture in the README (docs/img/tiny_shuffle_simplified.svg is this file, committed)
./build/tools/omopt dot out/tiny_shuffle.simplified.onnx -o out/tiny_shuffle.simplified.svg
./build/tools/omopt dot examples/tiny_shuffle.onnx --diff out/tiny_shuffle.simplified.onnx \
	-o out/tiny_shuffle.diff.svg
echo "drawn: out/tiny_shuffle.simplified.svg, out/tiny_shuffle.diff.svg"
echo "the command is ./build/tools/omopt (./build/tools/omopt --help)"
