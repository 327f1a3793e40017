#!/bin/sh
# The main job on the bundled example: install, build, simplify examples/tiny_shuffle.onnx,
# and draw the simplified model and the change.
set -eu
cd "$(dirname "$0")/.."
echo "demo: scripts/install-deps.sh installs from Debian what is missing of omopt's build and"
echo "      test dependencies (it names them before apt runs; nothing when all are there)"
sh scripts/install-deps.sh
echo "demo: configuring build/ (meson), then building the omopt command alone (ninja's"
echo "      progress below; the full log in build.log; the tests are not built)"
[ -d build ] || meson setup build >/dev/null
# only what the demo runs: the omopt command (scripts/test.sh builds the tests); every 20th
# of ninja's [done/total] lines shown as they come, everything kept in build.log
{ ninja -C build tools/omopt >build.log 2>&1; echo $? >build.status; } &
while :; do
	sleep 2
	line=$(grep -E '^\[[0-9]+/[0-9]+\]' build.log 2>/dev/null | tail -1 | cut -c1-100)
	[ -n "$line" ] && [ "$line" != "${last:-}" ] && echo "  $line" && last=$line
	[ -f build.status ] && break
done
wait
rc=$(cat build.status); rm -f build.status
[ "$rc" = 0 ] || { cat build.log; echo "demo: the build failed (build.log)"; exit 1; }
echo "demo: built build/tools/omopt"
mkdir -p out
./build/tools/omopt simplify examples/tiny_shuffle.onnx out/tiny_shuffle.simplified.onnx
# the picture in the README (docs/img/tiny_shuffle_simplified.svg is this file, committed)
./build/tools/omopt dot out/tiny_shuffle.simplified.onnx -o out/tiny_shuffle.simplified.svg
./build/tools/omopt dot examples/tiny_shuffle.onnx --diff out/tiny_shuffle.simplified.onnx \
	-o out/tiny_shuffle.diff.svg
echo "drawn: out/tiny_shuffle.simplified.svg, out/tiny_shuffle.diff.svg"
echo "the command is ./build/tools/omopt (./build/tools/omopt --help)"
