#!/usr/bin/env bash
# Builds the runtime's unit tests with clang's AddressSanitizer + UBSan and runs them once.
# Usage: test/sanitize/run.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR}
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
# detect_leaks: informer and recorder threads are joined, so leaks are real; halt on the first
# report so the failing test is the one named.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$build/sanitized_runtime_tests" --gtest_brief=1
