/*
 * What one training step costs the GPU's command encoding, counted by the context
 * (`GpuContext.counters()`): dispatches, bind groups created and the CPU time spent encoding,
 * for one step of the webgpu backend's training (@loop/train's `deviceStepEngine` over
 * `gpuBackendOps`, as `looplm train --backend webgpu` runs it) on fixed random tokens.
 *
 * The dispatch count of a step is a fact of the code, linear in the layers L and loops R of a
 * single-mixer backbone: fixed + perLayerApplication·L·R + perLayer·L (the embedding, head and
 * loss once; each layer's forward and backward at each of the L·R applications; each layer's
 * weights' gradients, clipping and AdamW once). `dispatchFormula` solves it from three models,
 * in total and per kernel (the context counts each kernel's dispatches).
 */
import { LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, type TrainOptions } from "@loop/train";
import { type GpuContext, type GpuCounters, gpuBackendOps } from "@loop/webgpu";

/** The counters of each of `steps` consecutive training steps of `config` on `batch`×`seq`. */
export async function stepCounters(
  ctx: GpuContext,
  config: ModelConfigInput,
  shape: { batch: number; seq: number },
  o: TrainOptions,
  steps = 2,
): Promise<GpuCounters[]> {
  const cfg = parseConfig(config);
  const model = new LoopedModel(cfg, { seed: 0 });
  const engine = deviceStepEngine(deviceTraining(model, gpuBackendOps(ctx), o), o);
  const rng = new Rng(1);
  const n = shape.batch * shape.seq;
  const tokens = new Int32Array(n);
  const targets = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    tokens[i] = rng.int(cfg.vocab_size);
    targets[i] = rng.int(cfg.vocab_size);
  }
  const batch = { tokens, targets, shape: [shape.batch, shape.seq] as [number, number] };
  const out: GpuCounters[] = [];
  try {
    for (let s = 0; s < steps; s++) {
      ctx.resetCounters();
      await engine.step([batch], o.lr);
      out.push(ctx.counters());
    }
  } finally {
    engine.dispose();
  }
  return out;
}

/** Dispatches of a training step of a model with L layers applied R times (one mixer kind). */
export interface DispatchFormula {
  fixed: number;
  /** Forward + backward of one layer at one of its L·R applications. */
  perLayerApplication: number;
  /** Once per layer whatever R: its weights' gradients, clipping and optimiser update. */
  perLayer: number;
}

/** The formula with each kernel's share of it (by kernel name; the shares sum to the formula). */
export interface DispatchBreakdown extends DispatchFormula {
  byKernel: Record<string, DispatchFormula>;
}

/** The same three equations solved from the steps' counters, in total and per kernel. */
function solve(d11: number, d12: number, d21: number): DispatchFormula {
  const perLayerApplication = d12 - d11;
  const perLayer = d21 - d11 - perLayerApplication;
  return { fixed: d11 - perLayerApplication - perLayer, perLayerApplication, perLayer };
}

/** "name a" pieces of a breakdown's per-application shares, largest first (for logs). */
export function breakdownText(b: DispatchBreakdown, key: keyof DispatchFormula): string {
  return Object.entries(b.byKernel)
    .filter(([, f]) => f[key] !== 0)
    .sort(([na, a], [nb, c]) => c[key] - a[key] || (na < nb ? -1 : 1))
    .map(([name, f]) => `${name} ${f[key]}`)
    .join(", ");
}

/**
 * The number of GPU dispatches of one training step with L layers and R loops, from a fitted
 * formula.
 */
export const dispatchesAt = (f: DispatchFormula, L: number, R: number): number =>
  f.fixed + f.perLayerApplication * L * R + f.perLayer * L;

/**
 * The formula of `config` (a single-mixer backbone) from the steady-state step (the second: the
 * first also makes the gradients and the optimiser's moments) at (L, R) = (1, 1), (1, 2), (2, 1).
 * `config` may be a function of (L, R) (a hybrid whose `attn_layers` name every layer).
 */
export async function dispatchFormula(
  ctx: GpuContext,
  config: ModelConfigInput | ((L: number, R: number) => ModelConfigInput),
  shape: { batch: number; seq: number },
  o: TrainOptions,
): Promise<DispatchBreakdown> {
  const configAt = (L: number, R: number) =>
    typeof config === "function" ? config(L, R) : { ...config, n_layers: L, n_loops: R };
  const at = async (L: number, R: number) =>
    (await stepCounters(ctx, configAt(L, R), shape, o, 2))[1]!;
  const c11 = await at(1, 1);
  const c12 = await at(1, 2);
  const c21 = await at(2, 1);
  const byKernel: Record<string, DispatchFormula> = {};
  const names = new Set([c11, c12, c21].flatMap((c) => Object.keys(c.byKernel)));
  for (const k of [...names].sort()) {
    const n = (c: GpuCounters) => c.byKernel[k] ?? 0;
    byKernel[k] = solve(n(c11), n(c12), n(c21));
  }
  return { ...solve(c11.dispatches, c12.dispatches, c21.dispatches), byKernel };
}
