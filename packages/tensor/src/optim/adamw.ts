/*
 * AdamW on the CPU: `AdamWCore` (the bookkeeping, written once for every backend) over
 * `cpuTrainOps`, whose update is `adamwUpdate` (a loop in double, or its native twin). State (step, m, v) is
 * serialisable for exact resume.
 */
import { cpuTrainOps } from "../backend/cpu-train-ops.js";
import type { NamedParameter } from "../module.js";
import type { Tensor } from "../tensor.js";
import { AdamWCore, type AdamWOptions, type AdamWState } from "./adamw-core.js";

export type { AdamWOptions, AdamWState } from "./adamw-core.js";
export type { NativeAdamw } from "./adamw-update.js";

/**
 * AdamW on CPU tensors (decoupled weight decay, skipped for parameters whose `decay` is false);
 * state (step, m, v) serialisable for exact resume.
 */
export class AdamW extends AdamWCore<Tensor> {
  constructor(params: readonly NamedParameter[], opts: AdamWOptions = {}) {
    super(cpuTrainOps, params, opts);
  }

  /** The step count and copies of the moments. */
  getState(): AdamWState {
    const s = this.collect((t) => Float32Array.from(t.data));
    return { step: s.step, m: Object.fromEntries(s.m), v: Object.fromEntries(s.v) };
  }
}
