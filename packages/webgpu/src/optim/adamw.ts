/**
 * AdamW on the device: the numerics, options, per-parameter decay and state of @loop/tensor's
 * AdamW (decoupled weight decay as in torch.optim.AdamW; frozen parameters and parameters without
 * a gradient are skipped and their moments stay untouched). `step` enqueues one kernel per
 * parameter and reads nothing back; the moments live on the device as persistent tensors.
 * The element arithmetic is float32 (the CPU twin computes each element in double and rounds).
 */
import type { AdamWOptions, AdamWState } from "@loop/tensor";
import { adamwHyperparameters } from "@loop/tensor/kernel";
import { zeroGpuGrads } from "../backward.js";
import { GpuTensor, uploadTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { adamwKernel, OPTIM_GROUP } from "../kernels/optim.js";
import { fillInPlace } from "../ops/elementwise.js";

/** A trainable GPU tensor with its name and whether weight decay applies (as NamedParameter). */
export interface GpuNamedParameter {
  name: string;
  tensor: GpuTensor;
  decay: boolean;
}

export class GpuAdamW {
  readonly params: readonly GpuNamedParameter[];
  lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  private t = 0;
  private readonly m = new Map<string, GpuTensor>();
  private readonly v = new Map<string, GpuTensor>();

  constructor(params: readonly GpuNamedParameter[], opts: AdamWOptions = {}) {
    const hp = adamwHyperparameters(
      params.map((p) => p.name),
      opts,
      "GpuAdamW",
    );
    this.params = params;
    this.lr = hp.lr;
    this.beta1 = hp.beta1;
    this.beta2 = hp.beta2;
    this.eps = hp.eps;
    this.weightDecay = hp.weightDecay;
  }

  get stepCount(): number {
    return this.t;
  }

  private moment(map: Map<string, GpuTensor>, p: GpuNamedParameter): GpuTensor {
    let t = map.get(p.name);
    if (!t) {
      t = new GpuTensor(p.tensor.ctx, p.tensor.shape, { persistent: true });
      fillInPlace(t, 0);
      map.set(p.name, t);
    }
    return t;
  }

  /** Enqueue one update from the parameters' accumulated `.grad`. */
  step(lr = this.lr): void {
    if (!(Number.isFinite(lr) && lr >= 0))
      throw new Error(`GpuAdamW: lr must be a finite number ≥ 0, got ${lr}`);
    this.t++;
    const c1 = 1 - this.beta1 ** this.t;
    const c2 = 1 - this.beta2 ** this.t;
    for (const p of this.params) {
      const t = p.tensor;
      const g = t.grad;
      if (!t.requiresGrad || g === null) continue;
      const m = this.moment(this.m, p);
      const v = this.moment(this.v, p);
      t.ctx.run(
        adamwKernel,
        { w: t.buffer, g: g.buffer, m: m.buffer, v: v.buffer },
        {
          n: t.size,
          decay: p.decay ? 1 - lr * this.weightDecay : 1,
          stepSize: lr / c1,
          b1: this.beta1,
          b2: this.beta2,
          eps: this.eps,
          sc2: 1 / Math.sqrt(c2),
        },
        grid(t.size, OPTIM_GROUP),
      );
    }
  }

  /** Drop every parameter's gradient. */
  zeroGrad(): void {
    zeroGpuGrads(this.params.map((p) => p.tensor));
  }

  /** The step count and moments, read back from the device (the CPU AdamW's state format). */
  async getState(): Promise<AdamWState> {
    const read = async (map: Map<string, GpuTensor>) =>
      Object.fromEntries(
        await Promise.all([...map].map(async ([k, t]) => [k, await t.read()] as const)),
      );
    return { step: this.t, m: await read(this.m), v: await read(this.v) };
  }

  setState(st: AdamWState): void {
    const byName = new Map(this.params.map((p) => [p.name, p]));
    for (const key of ["m", "v"] as const)
      for (const [name, a] of Object.entries(st[key])) {
        const p = byName.get(name);
        if (!p) throw new Error(`GpuAdamW.setState: state for unknown parameter "${name}"`);
        if (p.tensor.size !== a.length)
          throw new Error(
            `GpuAdamW.setState: "${name}" ${key} has ${a.length} values, parameter has ${p.tensor.size}`,
          );
      }
    this.dispose();
    this.t = st.step;
    for (const key of ["m", "v"] as const)
      for (const [name, a] of Object.entries(st[key])) {
        const p = byName.get(name)!;
        this[key].set(name, uploadTensor(p.tensor.ctx, a, p.tensor.shape, { persistent: true }));
      }
  }

  /** Free the moments on the device (the optimiser restarts from zero moments afterwards). */
  dispose(): void {
    for (const map of [this.m, this.v]) {
      for (const t of map.values()) t.dispose();
      map.clear();
    }
  }
}
