/**
 * One memory measurement in a fresh process (no garbage from earlier measurements): build the
 * final-loop loss of a looped Mamba-2 model, force a garbage collection, and report the live
 * array-buffer memory the recorded graph keeps for the backward pass; then time the backward.
 * Usage: node --expose-gc --import tsx --conditions=@loop/source memory-probe.ts '<json>' stored|recompute
 */
import { LoopedModel } from "@loop/looped";
import { backward, intTensor, Rng } from "@loop/tensor";
import { type MemoryConfig, memoryModelConfig } from "./memory-config.js";

const c = JSON.parse(process.argv[2]!) as MemoryConfig;
const checkpointing = process.argv[3] === "recompute";
const gcOnce = (globalThis as { gc?: () => void }).gc!;
/** Collect until the array-buffer figure stops falling: one gc() can leave freed backing stores
 * counted (a second one released 290 MB after a checkpointed forward here). */
const gc = () => {
  let last = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 8; i++) {
    gcOnce();
    const now = process.memoryUsage().arrayBuffers;
    if (now >= last) break;
    last = now;
  }
};
const model = new LoopedModel(memoryModelConfig(c), { seed: 1 });
const rng = new Rng(2);
const ids = Array.from({ length: c.B * c.T }, () => rng.int(c.V));
const tokens = intTensor(ids, [c.B, c.T]);
const targets = intTensor(ids, [c.B, c.T]);
gc();
const base = process.memoryUsage().arrayBuffers;
const t0 = performance.now();
const loss = model.finalLoss(tokens, targets, { checkpointing });
const forwardS = (performance.now() - t0) / 1000;
gc();
const held = process.memoryUsage().arrayBuffers - base;
const t1 = performance.now();
backward(loss);
const backwardS = (performance.now() - t1) / 1000;
process.stdout.write(
  `${JSON.stringify({ held, forwardS, backwardS, peakRss: process.resourceUsage().maxRSS * 1024 })}\n`,
);
