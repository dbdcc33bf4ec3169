/*
 * AdamW (Loshchilov & Hutter), decoupled weight decay as in PyTorch's torch.optim.AdamW, written
 * once over a backend's `TrainOps`: the hyper-parameters, the moments, the step count, the bias
 * correction, the per-parameter decay and learning-rate factor, and the state for checkpoints.
 * The element update itself is the backend's op (`ops.adamw`: a C or TypeScript loop on the CPU,
 * a WGSL kernel on the GPU):
 *   p ← p − lr·wd·p                          (only for parameters with decay = true)
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
 *   p ← p − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps)
 * Parameters that are frozen or hold no gradient are skipped and their moments stay untouched.
 */
import type { AutogradOps } from "../backend/autograd-ops.js";
import type { TrainOps, TrainParameter } from "../backend/train-ops.js";

/** AdamW hyper-parameters: learning rate, β1, β2, ε and decoupled weight decay. */
export interface AdamWOptions {
  lr?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
}

/** AdamW's resumable state: the step count and the first and second moments by parameter name. */
export interface AdamWState {
  step: number;
  m: Record<string, Float32Array>;
  v: Record<string, Float32Array>;
}

/**
 * AdamW written once for every backend: step count, bias corrections, weight-decay flags and state,
 * over a backend's `TrainOps` update.
 */
export class AdamWCore<T> {
  /** The backend ops the update runs on. */
  readonly ops: TrainOps<T, unknown> & AutogradOps<T>;
  /** The parameters updated, with their names, decay flags and learning-rate scales. */
  readonly params: readonly TrainParameter<T>[];
  /** The learning rate used when `step` is given none. */
  lr: number;
  /** β1, the first-moment decay. */
  readonly beta1: number;
  /** β2, the second-moment decay. */
  readonly beta2: number;
  /** ε, added to the root of the second moment. */
  readonly eps: number;
  /** The decoupled weight decay, applied to parameters whose `decay` is true. */
  readonly weightDecay: number;
  private t = 0;
  private readonly m = new Map<string, T>();
  private readonly v = new Map<string, T>();

  /** Defaults as PyTorch's; every option checked, and the names unique (one message each). */
  constructor(
    ops: TrainOps<T, unknown> & AutogradOps<T>,
    params: readonly TrainParameter<T>[],
    o: AdamWOptions = {},
  ) {
    const seen = new Set<string>();
    for (const { name } of params) {
      if (seen.has(name)) throw new Error(`AdamW: parameter name "${name}" appears twice`);
      seen.add(name);
    }
    this.ops = ops;
    this.params = params;
    this.lr = o.lr ?? 1e-3;
    this.beta1 = o.beta1 ?? 0.9;
    this.beta2 = o.beta2 ?? 0.999;
    this.eps = o.eps ?? 1e-8;
    this.weightDecay = o.weightDecay ?? 0.01;
    for (const k of ["lr", "eps", "weightDecay"] as const)
      if (!(Number.isFinite(this[k]) && this[k] >= 0))
        throw new Error(`AdamW: ${k} must be a finite number ≥ 0, got ${this[k]}`);
    for (const k of ["beta1", "beta2"] as const)
      if (!(this[k] >= 0 && this[k] < 1))
        throw new Error(`AdamW: ${k} must be in [0, 1), got ${this[k]}`);
  }

  /** Optimiser steps taken (the bias corrections' t). */
  get stepCount(): number {
    return this.t;
  }

  /**
   * Apply (enqueue, on a device) one update from the parameters' accumulated gradients; with a
   * `guard` (`TrainOps.guardFinite`) the device skips it when guard[0] is 0 (the step count
   * still advances here: the caller that learns of the skip corrects it with `setStepCount`).
   */
  step(lr = this.lr, guard?: T): void {
    if (!(Number.isFinite(lr) && lr >= 0))
      throw new Error(`AdamW: lr must be a finite number ≥ 0, got ${lr}`);
    const ops = this.ops;
    this.t++;
    const c1 = 1 - this.beta1 ** this.t;
    const c2 = 1 - this.beta2 ** this.t;
    for (const p of this.params) {
      if (!ops.hasGrad(p.tensor)) continue;
      let m = this.m.get(p.name);
      let v = this.v.get(p.name);
      if (m === undefined || v === undefined) {
        const shape = ops.shapeOf(p.tensor);
        m = ops.zeros(shape);
        v = ops.zeros(shape);
        this.m.set(p.name, m);
        this.v.set(p.name, v);
      }
      // a parameter's own learning rate (PyTorch: its param group's), decay included
      const plr = p.lrScale === undefined ? lr : lr * p.lrScale;
      const c = {
        decay: p.decay ? 1 - plr * this.weightDecay : 1,
        stepSize: plr / c1,
        beta1: this.beta1,
        beta2: this.beta2,
        eps: this.eps,
        sc2: 1 / Math.sqrt(c2),
      };
      if (guard === undefined) ops.adamw(p.tensor, m, v, c);
      else ops.adamw(p.tensor, m, v, c, guard);
    }
  }

  /** Set the step count (the updates a device really applied, after guarded skips). */
  setStepCount(t: number): void {
    if (!(Number.isInteger(t) && t >= 0))
      throw new Error(`AdamW: a step count must be an integer ≥ 0, got ${t}`);
    this.t = t;
  }

  /** Drop every parameter's gradient. */
  zeroGrad(): void {
    this.ops.zeroGrads(this.params.map((p) => p.tensor));
  }

  /** The step count and each moment passed through `read` (in the order they were made). */
  protected collect<R>(read: (t: T) => R): { step: number; m: [string, R][]; v: [string, R][] } {
    const each = (map: Map<string, T>) => [...map].map(([k, t]) => [k, read(t)] as [string, R]);
    return { step: this.t, m: each(this.m), v: each(this.v) };
  }

  /** The step count and the moments, copied to the host (for checkpoints). */
  async readState(): Promise<AdamWState> {
    const s = this.collect((t) => this.ops.read(t));
    const all = async (e: [string, Promise<Float32Array>][]) =>
      Object.fromEntries(await Promise.all(e.map(async ([k, p]) => [k, await p] as const)));
    return { step: s.step, m: await all(s.m), v: await all(s.v) };
  }

  /** Restore the step count and moments (checked against the parameters first). */
  setState(st: AdamWState): void {
    const byName = new Map(this.params.map((p) => [p.name, p]));
    for (const key of ["m", "v"] as const)
      for (const [name, a] of Object.entries(st[key])) {
        const p = byName.get(name);
        if (!p) throw new Error(`AdamW.setState: state for unknown parameter "${name}"`);
        const n = this.ops.shapeOf(p.tensor).reduce((x, y) => x * y, 1);
        if (n !== a.length)
          throw new Error(
            `AdamW.setState: "${name}" ${key} has ${a.length} values, parameter has ${n}`,
          );
      }
    this.dispose();
    this.t = st.step;
    for (const key of ["m", "v"] as const)
      for (const [name, a] of Object.entries(st[key])) {
        const shape = this.ops.shapeOf(byName.get(name)!.tensor);
        this[key].set(name, this.ops.upload(a, shape, { persistent: true }));
      }
  }

  /** Free the moments (the optimiser restarts from zero moments at the same step count). */
  dispose(): void {
    for (const map of [this.m, this.v]) {
      for (const t of map.values()) this.ops.dispose(t);
      map.clear();
    }
  }
}
