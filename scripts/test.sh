#!/bin/sh
# All the tests: install, build (plain and ASan+UBSan), run the whole suite in both, and the
# concurrency test under ThreadSanitizer; compile a
# release build too, so that warnings only -O3 shows fail here rather than in a user's build, and
# a clang build when clang is installed; then fuzz each libFuzzer harness briefly
# (scripts/fuzz.sh) when clang is installed.
set -eu
cd "$(dirname "$0")/.."
# clang and libFuzzer for the clang build and the fuzz smoke runs, Chromium and playwright-core
# for the viewer's browser test (the demo does not need them; without npm or the network the
# viewer test skips, saying what it lacks)
sh scripts/install-deps.sh clang libclang-rt-14-dev chromium
sh scripts/install-viewer.sh || true
[ -d build ] || meson setup build >/dev/null
# the test executables too, before the suite (a test would build its own, inside its timeout)
ninja -C build all test-binaries
meson test -C build --print-errorlogs --num-processes 2
[ -d build-release ] || meson setup build-release --buildtype=release -Dtests=false >/dev/null
ninja -C build-release
# clang too, with the same warnings as errors, when it is installed (compiled, tests included,
# not run: the plain suite above ran them)
if command -v clang >/dev/null 2>&1; then
	[ -d build-clang ] || CC=clang meson setup build-clang -Dtest_link=shared >/dev/null
	ninja -C build-clang all test-binaries # (no test executable is built by default)
fi
# (test_link=shared: the tests link one libomopt.so, not each a static copy of the library)
[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	--buildtype=debug -Dtest_link=shared >/dev/null
ninja -C build-asan all test-binaries
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3
# ThreadSanitizer over the concurrency test (one session run from 8 threads at once, on the
# shared models too): only its target is built
[ -d build-tsan ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false >/dev/null
ninja -C build-tsan tests/test_concurrent
TSAN_OPTIONS=halt_on_error=1:ignore_noninstrumented_modules=1 OM_CONCURRENT_RUNS=50 \
	meson test -C build-tsan --no-rebuild --print-errorlogs concurrent
# a smoke run of each libFuzzer harness (fuzz/, about 60 s each; skipped, saying why, without
# clang and its libFuzzer runtime). A finding is printed with its input's path; it fails the
# command only with OMOPT_FUZZ_STRICT=1: a time-bounded random search must not make CI flaky.
# What must hold every time is the replay of the committed corpus (fuzz/corpus, with each
# fixed finding's reproducer as repro_*), which the plain and ASan suites above run.
fuzz=0
sh scripts/fuzz.sh "${OMOPT_FUZZ_SECONDS:-60}" || fuzz=${OMOPT_FUZZ_STRICT:-0}
# the tests that skipped, with the reason they printed (most need ../shared beside the clone,
# Node.js and the ONNX Runtime oracle: see ../shared/README.md)
for b in build build-asan build-tsan; do
	python3 - "$b" <<'EOF'
import json, sys
for line in open(sys.argv[1] + '/meson-logs/testlog.json'):
    r = json.loads(line)
    if r['result'] == 'SKIP':
        text = [l for l in (r.get('stdout') or '').splitlines() if l.strip()]
        print('skipped (%s): %s: %s' % (sys.argv[1], r['name'], text[-1] if text else '?'))
EOF
done
# one closing line for both runs, in the plain form CI reads
count() { awk -v k="$1:" '$1 == k {print $2}' "$2/meson-logs/testlog.txt"; }
sum() { echo $(( $(count "$1" build) + $(count "$1" build-asan) + $(count "$1" build-tsan) )); }
echo "tests: $(sum Ok) passed, $(sum Fail) failed, $(sum Skipped) skipped"
exit $fuzz
