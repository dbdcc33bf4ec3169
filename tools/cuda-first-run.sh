#!/usr/bin/env bash
# The first run of the CUDA backend on a machine with an NVIDIA GPU (sm_80 or newer), from the
# repository root after `pnpm install`: what no machine without a GPU could check (docs/cuda.md,
# "The first GPU run"). Each step prints what it checks; the first failure stops the script.
# Output: a folder (default cuda-first-run/) with every step's log, for benchmarks/RESULTS.md.
#   tools/cuda-first-run.sh [out-dir]
set -euo pipefail
out="${1:-cuda-first-run}"
mkdir -p "$out"
log() { printf '\n== %s\n' "$*" | tee -a "$out/summary.txt"; }
run() { "$@" 2>&1 | tee -a "$out/summary.txt"; }

log "machine, driver, commit"
run nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
run git rev-parse HEAD
run grep -m1 'model name' /proc/cpuinfo

log "1. looplm check --backend cuda: every op case (fp32, and the GEMM ones in tf32 and bf16), the golden cases, a training run per backbone against the CPU oracle, then speed"
run pnpm --silent looplm check --backend cuda --budget 5m --out "$out/check"

log "2. the device starts: driver, GPU, kernels compiled for its architecture, cuBLASLt found or not"
run node --import tsx --conditions=@loop/source -e '
  const { startCudaDevice } = await import("@loop/cuda/node");
  const r = await startCudaDevice();
  if (!r.ok) { console.error(`cuda: ${r.reason}`); process.exit(1); }
  console.log(JSON.stringify(r.info)); r.device.destroy();'

log "3. host-side suites (kernel build for sm_80/sm_90 without spills, allocator, launch plan, precision, the host emulator)"
run pnpm vitest run packages/cuda packages/looplm/src/cuda-launch-plan.test.ts \
  packages/looplm/src/cuda-emulated.test.ts packages/looplm/src/cuda-emulated-training.test.ts \
  packages/looplm/src/forward/cuda-emulated-golden.test.ts

log "4. looplm check's op cases as a test suite, fp32 / tf32 / bf16 (each case its own test)"
run pnpm vitest run packages/looplm/src/cuda-conformance.test.ts

log "5. the golden cases through looplm forward --backend cuda (forward and gradients)"
run pnpm vitest run packages/looplm/src/forward/golden.test.ts -t cuda
for case in testdata/golden/*/; do
  name="$(basename "$case")"
  [ -f "$case/inputs.json" ] || continue
  run pnpm --silent looplm forward --backend cuda --model "$case" --input "$case/inputs.json" \
    --out "$out/forward-$name.safetensors"
done

log "6. 30 training steps: fp32 against the CPU, bf16 within 1 % of fp32"
run pnpm vitest run packages/looplm/src/cuda-training.test.ts

log "7. cuBLASLt against the backend's own GEMMs (the same suites on the own kernels)"
LOOPLM_CUBLASLT=0 run pnpm vitest run packages/looplm/src/cuda-conformance.test.ts

log "8. step time at the paper's scale (d_model 768, 16 x 1024 tokens), bf16 and fp32"
run node --import tsx --conditions=@loop/source tools/cuda-first-run/step-time.ts bf16
run node --import tsx --conditions=@loop/source tools/cuda-first-run/step-time.ts fp32

log "done: $out/summary.txt and $out/check/report.md"
