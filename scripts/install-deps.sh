#!/bin/sh
# Installs omopt's build and test dependencies from Debian 12's archive (needs root or sudo).
# Skips apt entirely when everything is already installed. Extra package names given as
# arguments are installed too (scripts/test.sh adds clang and its libFuzzer runtime).
#   usage: install-deps.sh [PACKAGE...]
set -eu
# libdnnl-dev (oneDNN) is optional for the build: bench/conv_dnnl measures Conv layers with it.
# g++ and libre2-dev: RegexFullMatch (kernels/text/re2_wrap.cc); libjpeg62-turbo-dev to
# libstb-dev: ImageDecoder's decoders (kernels/image/)
pkgs="$* gcc pkg-config meson ninja-build protobuf-c-compiler libprotobuf-c-dev uthash-dev
      libcmocka-dev libgraphviz-dev graphviz libopenblas-dev libdnnl-dev libonnx-testdata
      python3-onnx python3-numpy python3-pytest
      g++ libre2-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libtiff-dev libopenjp2-7-dev
      libstb-dev python3-sklearn python3-mesonpy python3-venv"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing:$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
