/**
 * AdamW (Loshchilov & Hutter), decoupled weight decay as in PyTorch's torch.optim.AdamW:
 *   p ← p − lr·wd·p                          (only for parameters with decay = true)
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
 *   p ← p − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps)
 * Parameters whose tensor does not require a gradient (frozen) or has no gradient are skipped and
 * their moments stay untouched. A parameter's `lrScale` multiplies lr for it (a param group's lr).
 * State (step, m, v) is serialisable for exact resume.
 */
import type { NamedParameter } from "../module.js";
import { kernelSet } from "../native-registry.js";

/**
 * Native twin of the update loop in `step` (native/tensor.c `adamw`): the same double
 * arithmetic, the same bits.
 */
export type NativeAdamw = (
  w: Float32Array,
  g: Float32Array,
  m: Float32Array,
  v: Float32Array,
  n: number,
  decay: number,
  stepSize: number,
  beta1: number,
  beta2: number,
  eps: number,
  sc2: number,
) => void;

export interface AdamWOptions {
  lr?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
}

export interface AdamWState {
  step: number;
  m: Record<string, Float32Array>;
  v: Record<string, Float32Array>;
}

/**
 * The options of an AdamW over parameters named `names`, defaulted and checked (one message per
 * problem, prefixed with `who`): shared with the optimisers of other backends.
 */
export function adamwHyperparameters(
  names: readonly string[],
  opts: AdamWOptions,
  who = "AdamW",
): Required<AdamWOptions> {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new Error(`${who}: parameter name "${name}" appears twice`);
    seen.add(name);
  }
  const hp = {
    lr: opts.lr ?? 1e-3,
    beta1: opts.beta1 ?? 0.9,
    beta2: opts.beta2 ?? 0.999,
    eps: opts.eps ?? 1e-8,
    weightDecay: opts.weightDecay ?? 0.01,
  };
  for (const k of ["lr", "eps", "weightDecay"] as const) {
    const v = hp[k];
    if (!(Number.isFinite(v) && v >= 0))
      throw new Error(`${who}: ${k} must be a finite number ≥ 0, got ${v}`);
  }
  for (const k of ["beta1", "beta2"] as const) {
    const v = hp[k];
    if (!(v >= 0 && v < 1)) throw new Error(`${who}: ${k} must be in [0, 1), got ${v}`);
  }
  return hp;
}

export class AdamW {
  readonly params: readonly NamedParameter[];
  lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  private t = 0;
  private readonly m = new Map<string, Float32Array>();
  private readonly v = new Map<string, Float32Array>();

  constructor(params: readonly NamedParameter[], opts: AdamWOptions = {}) {
    const hp = adamwHyperparameters(
      params.map((p) => p.name),
      opts,
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

  /** Apply one update from the parameters' accumulated `.grad`. */
  step(lr = this.lr): void {
    this.t++;
    const b1 = this.beta1;
    const b2 = this.beta2;
    const c1 = 1 - b1 ** this.t;
    const c2 = 1 - b2 ** this.t;
    for (const p of this.params) {
      const t = p.tensor;
      const g = t.grad;
      if (!t.requiresGrad || g === null) continue;
      let m = this.m.get(p.name);
      let v = this.v.get(p.name);
      if (!m || !v) {
        m = new Float32Array(t.size);
        v = new Float32Array(t.size);
        this.m.set(p.name, m);
        this.v.set(p.name, v);
      }
      const w = t.data;
      // a parameter's own learning rate (PyTorch: its param group's), decay included
      const plr = p.lrScale === undefined ? lr : lr * p.lrScale;
      const decay = p.decay ? 1 - plr * this.weightDecay : 1;
      const stepSize = plr / c1;
      const eps = this.eps;
      const sc2 = 1 / Math.sqrt(c2);
      const nat = kernelSet("tensor")?.adamw;
      if (nat) {
        nat(w, g, m, v, w.length, decay, stepSize, b1, b2, eps, sc2);
        continue;
      }
      for (let i = 0; i < w.length; i++) {
        const gi = g[i]!;
        const mi = b1 * m[i]! + (1 - b1) * gi;
        const vi = b2 * v[i]! + (1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] = w[i]! * decay - (stepSize * mi) / (Math.sqrt(vi) * sc2 + eps);
      }
    }
  }

  /** Clear every parameter's gradient. */
  zeroGrad(): void {
    for (const p of this.params) p.tensor.grad = null;
  }

  getState(): AdamWState {
    return {
      step: this.t,
      m: Object.fromEntries([...this.m.entries()].map(([k, a]) => [k, Float32Array.from(a)])),
      v: Object.fromEntries([...this.v.entries()].map(([k, a]) => [k, Float32Array.from(a)])),
    };
  }

  setState(st: AdamWState): void {
    const byName = new Map(this.params.map((p) => [p.name, p.tensor.size]));
    for (const key of ["m", "v"] as const) {
      for (const [name, a] of Object.entries(st[key])) {
        const n = byName.get(name);
        if (n === undefined)
          throw new Error(`AdamW.setState: state for unknown parameter "${name}"`);
        if (n !== a.length)
          throw new Error(
            `AdamW.setState: "${name}" ${key} has ${a.length} values, parameter has ${n}`,
          );
      }
    }
    this.t = st.step;
    this.m.clear();
    this.v.clear();
    for (const [name, a] of Object.entries(st.m)) this.m.set(name, Float32Array.from(a));
    for (const [name, a] of Object.entries(st.v)) this.v.set(name, Float32Array.from(a));
  }
}
