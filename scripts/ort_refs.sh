#!/bin/sh
# Writes ONNX Runtime's outputs for each model folder (model.onnx + in/*.npy) into ref/N.npy.
# usage: scripts/ort_refs.sh DIR...   (needs ../shared/oracle installed)
set -eu
oracle="${OMOPT_SHARED:-$(dirname "$0")/../../shared}/oracle/ort_run.js"
for d in "$@"; do
	args=""
	for f in "$d"/in/*.npy; do
		n=$(basename "$f" .npy)
		args="$args $n=$f"
	done
	# shellcheck disable=SC2086
	node "$oracle" "$d/model.onnx" "$d/ref" $args >/dev/null
	echo "ref: $d"
done
