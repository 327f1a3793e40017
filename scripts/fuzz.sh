#!/bin/sh
# Builds the libFuzzer harnesses of fuzz/ (build-fuzz: clang, ASan+UBSan, coverage) and runs
# each for SECONDS (default 60) from the committed seed corpus.
#   sh scripts/fuzz.sh [SECONDS] [HARNESS...]      harnesses: load simplify run tensor
# New coverage goes to build-fuzz/corpus/HARNESS (kept between runs); a finding stops with the
# harness's report, its input saved as build-fuzz/findings/HARNESS-crash-* (or leak-, timeout-,
# oom-). Allocations over 1 GiB fail (NULL) instead of succeeding, so that omopt's out-of-memory
# paths are what a huge request meets; more than 2 GiB resident, or 25 s on one input, is a
# finding. The last line per harness is libFuzzer's count of executions.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
harnesses=${*:-load simplify run tensor}
if ! command -v clang >/dev/null; then
	echo "fuzz: skipped: clang is not installed (apt-get install clang libclang-rt-14-dev)"
	exit 0
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
	echo "fuzz: skipped: clang cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev)"
	exit 0
fi
# warnings are checked by the gcc and clang builds of scripts/test.sh, not here
# clang++ too: the fuzzer flags are clang's, and kernels/text/re2_wrap.cc is C++
[ -d build-fuzz ] || CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false -Dwerror=false \
	>/dev/null
targets=
for h in $harnesses; do
	targets="$targets fuzz/fuzz_$h"
done
ninja -C build-fuzz $targets
mkdir -p build-fuzz/findings
export ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1
export LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0"
status=0
for h in $harnesses; do
	case $h in
	tensor) seeds=fuzz/corpus/tensors dict= ;;
	*) seeds=fuzz/corpus/models dict=-dict=fuzz/models.dict ;;
	esac
	mkdir -p build-fuzz/corpus/$h
	echo "fuzz: $h for ${secs} s"
	if ! build-fuzz/fuzz/fuzz_$h -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix=build-fuzz/findings/$h- $dict \
		build-fuzz/corpus/$h $seeds >build-fuzz/fuzz_$h.log 2>&1; then
		status=1
		echo "fuzz: $h: FINDING (build-fuzz/fuzz_$h.log):"
		grep -E 'ERROR|SUMMARY|omopt fuzz finding|runtime error|Test unit written' \
			build-fuzz/fuzz_$h.log | head -20
	fi
	echo "fuzz: $h: $(grep -E '^stat::number_of_executed_units' build-fuzz/fuzz_$h.log |
		awk '{print $2}') executions"
done
exit $status
