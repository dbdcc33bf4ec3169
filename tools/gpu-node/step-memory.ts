/**
 * The device memory a training step of the GPU node's models needs, counted without a GPU: one
 * step of each model (step-models.ts) at 16 × 1024 on the CUDA backend's recording device, in
 * bf16 and fp32, without activation checkpointing, per loop step and per layer application,
 * as the allocator's peak of bytes in use (fit-batch.ts `stepBytes`). Prints one Markdown table.
 *   pnpm exec tsx --conditions=@loop/source tools/gpu-node/step-memory.ts
 */
import type { CudaPrecision } from "@loop/cuda";
import type { Checkpointing } from "@loop/looped";
import { stepBytes } from "./fit-batch.js";
import { SEQ, STEP_MODELS } from "./step-models.js";

const BATCH = 16;
const RUNS: [CudaPrecision, Checkpointing][] = [
  ["bf16", false],
  ["fp32", false],
  ["bf16", "step"],
  ["bf16", "layer"],
];

console.log(`| model | precision | checkpointing | GiB at ${BATCH} × ${SEQ} |\n|---|---|---|---|`);
for (const [name, input] of STEP_MODELS)
  for (const [precision, checkpointing] of RUNS) {
    const bytes = await stepBytes(input, precision, BATCH, SEQ, undefined, checkpointing);
    console.log(
      `| ${name} | ${precision} | ${checkpointing || "none"} | ${(bytes / 2 ** 30).toFixed(1)} |`,
    );
  }
