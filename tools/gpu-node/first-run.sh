#!/usr/bin/env bash
# The first run of looplm on a GPU node: one command that needs only the offline bundle and
# bash (no Node.js, npm, pnpm, compiler, git or network), with every figure in one summary.md.
#
#   looplm-bundle/first-run.sh [OUT]          (the bundle unpacked: this file is its first-run.sh)
#   tools/gpu-node/first-run.sh [OUT]          (a checkout with dist/bundle/looplm-*-linux-x64.tar.xz
#                                               built by `pnpm bundle`: unpacked to a temporary
#                                               folder, then run from there)
# OUT: the folder to write (default $OUT, else ./gpu-first-run). It gets at most 8 files:
#   summary.md          machine, driver, commit, each part's result and every figure
#   first-run.log       everything each part printed
#   cuda-check.json     looplm check --backend cuda's report
#   webgpu-check.json   looplm check --backend webgpu's report
#   step-time-bf16.json, step-time-tf32.json, decode.json   the step-time tool's rows
#
# Parts, each under its own time limit (none can stop the others; a part that fails or runs
# out of time is one line of why in summary.md): the machine and driver lines; `looplm check
# --backend cuda` (every op case in fp32, tf32 and bf16, the golden cases, training, speed);
# `looplm check --backend webgpu`; the step time of the d_model 768 `24⊗1`, `6⊗4` and hybrid
# models at the largest batch that fits the GPU, in bf16 beside PyTorch eager bf16 (where
# python3 imports torch) and in tf32; decode rates (generate --timing's, state on the GPU). The limits add up to 8 min 50 s, within
# the 9 minutes of a node's 10-minute command; summary.md is rewritten after every part, so a
# run cut short still leaves what it found.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
if [ -x "$here/bin/looplm" ] && [ -x "$here/node/bin/node" ]; then
  bundle="$here"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
else
  repo="$(cd "$here/../.." && pwd)"
  tarball="$(ls "$repo"/dist/bundle/looplm-*-linux-x64.tar.xz 2>/dev/null | head -1)"
  if [ -z "$tarball" ]; then
    echo "first-run: no offline bundle: build it first with pnpm bundle (dist/bundle/looplm-*-linux-x64.tar.xz)" >&2
    exit 1
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  tar -C "$tmp" -xJf "$tarball" || { echo "first-run: could not unpack $tarball" >&2; exit 1; }
  bundle="$tmp/looplm-bundle"
fi
out="${1:-${OUT:-$PWD/gpu-first-run}}"
mkdir -p "$out" || { echo "first-run: cannot make $out" >&2; exit 1; }
out="$(cd "$out" && pwd)"
log="$out/first-run.log"
: >"$log"
parts="$tmp/parts" # one line per part: name|result|seconds
sections="$tmp/sections"
mkdir -p "$sections"
: >"$parts"
looplm="$bundle/bin/looplm"
node="$bundle/node/bin/node"

# --- The machine ---------------------------------------------------------------------------------
line() { printf -- '- %s\n' "$*"; }
first() { "$@" 2>/dev/null | head -1; }
{
  line "when: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  line "looplm: $(cat "$bundle/VERSION" 2>/dev/null || echo 'unknown (no VERSION in the bundle)')"
  line "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc 2>/dev/null) cores; memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo 2>/dev/null)"
  line "OS: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), kernel $(uname -r)"
  gpu="$(first timeout 20 nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader)"
  line "GPU (nvidia-smi): ${gpu:-none: nvidia-smi is not here or answered nothing}"
  if [ -r /proc/driver/nvidia/version ]; then
    line "NVIDIA kernel driver: $(head -1 /proc/driver/nvidia/version)"
  else
    line "NVIDIA kernel driver: none (/proc/driver/nvidia/version is not there)"
  fi
  torch="$(timeout 60 python3 -c 'import torch; print(f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}, GPU available: {torch.cuda.is_available()}")' 2>&1 | tail -1)"
  line "python3: ${torch:-not here}"
} >"$sections/0-machine.md" 2>/dev/null
cat "$sections/0-machine.md" >>"$log"

write_summary() {
  {
    echo "# looplm on a GPU node: the first run"
    echo
    cat "$sections/0-machine.md"
    echo
    echo "| part | result | seconds |"
    echo "|---|---|---|"
    while IFS='|' read -r name result secs; do
      echo "| $name | $result | $secs |"
    done <"$parts"
    for f in "$sections"/[1-9]*.md; do
      [ -e "$f" ] || continue
      echo
      cat "$f"
    done
  } >"$out/summary.md.tmp" && mv "$out/summary.md.tmp" "$out/summary.md"
}
write_summary

# part NAME SECONDS CMD... : run CMD under its own limit, log what it prints, and record one
# line of result (ok, or the last line it printed: why it could not run).
part() {
  local name="$1" limit="$2"
  shift 2
  local start=$SECONDS
  printf '\n== %s (limit %s s): %s\n' "$name" "$limit" "$*" >>"$log"
  timeout -k 10 "$limit" "$@" >"$tmp/part.out" 2>&1 </dev/null
  local rc=$? secs=$((SECONDS - start))
  cat "$tmp/part.out" >>"$log"
  local why
  why="$(grep -v '^[[:space:]]*$' "$tmp/part.out" | tail -1 | tr '|' '/' | cut -c1-1000)"
  local result
  if [ "$rc" -eq 0 ]; then
    result="ok"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    result="timed out after $limit s${why:+ (last: $why)}"
  else
    result="could not run (exit $rc): ${why:-no output}"
  fi
  echo "$name|$result|$secs" >>"$parts"
}

# --- 1. looplm check --backend cuda ----------------------------------------------------------
part "looplm check --backend cuda" 150 \
  "$looplm" check --backend cuda --size full --budget 130s --out "$tmp/cuda-check"
if [ -f "$tmp/cuda-check/report.json" ]; then
  cp "$tmp/cuda-check/report.json" "$out/cuda-check.json"
  sed 's/^#/##/' "$tmp/cuda-check/report.md" >"$sections/1-cuda.md"
fi
write_summary

# --- 2. looplm check --backend webgpu ----------------------------------------------------------
part "looplm check --backend webgpu" 120 \
  "$looplm" check --backend webgpu --size full --budget 100s \
  --gpu-features f16,subgroups,subgroup-matrix --out "$tmp/webgpu-check"
if [ -f "$tmp/webgpu-check/report.json" ]; then
  cp "$tmp/webgpu-check/report.json" "$out/webgpu-check.json"
  sed 's/^#/##/' "$tmp/webgpu-check/report.md" >"$sections/2-webgpu.md"
fi
write_summary

# --- 3–5. step time (bf16 beside PyTorch, tf32) and decode on the CUDA backend -------------------
step_time() { # step_time NAME LIMIT SECTION TITLE ARGS...
  local name="$1" limit="$2" section="$3" title="$4"
  shift 4
  part "$name" "$limit" "$node" "$bundle/lib/js/gpu-step-time.js" "$@"
  {
    echo "## $title"
    echo
    grep -E '^(\||device: )' "$tmp/part.out" || echo "No figures: $(grep -v '^[[:space:]]*$' "$tmp/part.out" | tail -1)"
  } >"$sections/$section.md"
  write_summary
}
step_time "step time, bf16 (PyTorch eager bf16 beside)" 110 3-bf16 \
  "Training step, d_model 768, sequence 1024, bf16 (PyTorch eager bf16 beside)" \
  --precision bf16 --json "$out/step-time-bf16.json"
step_time "step time, tf32" 90 4-tf32 "Training step, d_model 768, sequence 1024, tf32" \
  --precision tf32 --no-torch --json "$out/step-time-tf32.json"
step_time "decode rates" 40 5-decode "Decode on the CUDA backend, bf16, batch 1, state on the GPU" \
  --precision bf16 --decode --json "$out/decode.json"

echo "first-run: $out/summary.md ($(grep -c '|ok|' "$parts") of $(wc -l <"$parts") parts ran)"
cat "$out/summary.md"
exit 0
