#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck over every
# prebuilt kernel at awkward sizes (tools/sanitize_kernels.py), on a GPU.
# PYGPU_NO_POOL=1 gives each array its own cudaMalloc, so that memcheck sees
# the true bounds (the pool rounds sizes up to 512 bytes). Logs go to $OUT.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
status=0
for tool in memcheck racecheck initcheck synccheck; do
    extra=""
    # the leak check without host backtraces: compute-sanitizer 2025.3 keeps
    # the Python frames of each recorded host backtrace alive, and with them
    # the arrays in their locals, which it then reports as leaked (a program
    # whose every array was freed reported 0 leaks with --show-backtrace
    # device, 2 with the default; H200, 2026-11-29)
    [ "$tool" = memcheck ] && extra="--leak-check full --show-backtrace device"
    PYGPU_NO_POOL=1 "$CS" --tool "$tool" $extra --error-exitcode 3 \
        env PYTHONPATH="$PWD" "$PY" tools/sanitize_kernels.py > "$OUT/sanitize-$tool.log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$OUT/sanitize-$tool.log" | tr '\n' ' ')
    echo "$tool: exit $rc; $summary; $(grep -c '^all kernels correct' "$OUT/sanitize-$tool.log") correct run"
    [ $rc -eq 0 ] || status=1
done
exit $status
