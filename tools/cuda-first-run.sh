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

log "1. the device starts: driver, GPU, kernels compiled for its architecture, cuBLASLt found or not"
run node --import tsx --conditions=@loop/source -e '
  const { startCudaDevice } = await import("@loop/cuda/node");
  const r = await startCudaDevice();
  if (!r.ok) { console.error(`cuda: ${r.reason}`); process.exit(1); }
  console.log(JSON.stringify(r.info)); r.device.destroy();'

log "2. host-side suites (kernel build for sm_80/sm_90 without spills, allocator, launch plan, precision, the host emulator)"
run pnpm vitest run packages/cuda packages/looplm/src/cuda-launch-plan.test.ts \
  packages/looplm/src/cuda-emulated.test.ts packages/looplm/src/cuda-emulated-training.test.ts \
  packages/looplm/src/forward/cuda-emulated-golden.test.ts

log "3. op conformance against the CPU's ops, fp32 / tf32 / bf16 (every op, forward and gradients)"
run pnpm vitest run packages/looplm/src/cuda-conformance.test.ts

log "4. the golden cases through looplm forward --backend cuda (forward and gradients)"
run pnpm vitest run packages/looplm/src/forward/golden.test.ts -t cuda
for case in testdata/golden/*/; do
  name="$(basename "$case")"
  [ -f "$case/inputs.json" ] || continue
  run pnpm --silent looplm forward --backend cuda --model "$case" --input "$case/inputs.json" \
    --out "$out/forward-$name.safetensors"
done

log "5. 30 training steps: fp32 against the CPU, bf16 within 1 % of fp32"
run pnpm vitest run packages/looplm/src/cuda-training.test.ts

log "6. cuBLASLt against the backend's own GEMMs (the same suites on the own kernels)"
LOOPLM_CUBLASLT=0 run pnpm vitest run packages/looplm/src/cuda-conformance.test.ts

log "7. step time at the paper's scale (d_model 768, 16 x 1024 tokens), bf16 and fp32"
run node --import tsx --conditions=@loop/source tools/cuda-first-run/step-time.ts bf16
run node --import tsx --conditions=@loop/source tools/cuda-first-run/step-time.ts fp32

log "done: $out/summary.txt; next: looplm check --backend cuda (the conformance command) once it exists"
