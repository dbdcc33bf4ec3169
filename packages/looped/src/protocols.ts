/*
 * The paper's comparison protocols, as data a user can print:
 *  - iso-parameter: N⊗R for each R — same N layers, so the same parameters, R× the compute;
 *  - iso-FLOPs: N⊗R beside (N·R)⊗1 — same effective depth and compute, R× fewer parameters
 *    for the looped one.
 */
import { countParameters, type FlopOptions, flopsPerToken } from "./accounting.js";
import type { ModelConfig } from "./config.js";

/**
 * One member of an iso-parameter or iso-FLOPs family: its N⊗R, effective depth, parameters, FLOPs
 * per token and config.
 */
export interface PlanRow {
  label: string;
  /** "looped" or "baseline" (non-looped of the same effective depth) */
  role: "looped" | "baseline";
  layers: number;
  loops: number;
  effectiveDepth: number;
  params: number;
  flopsPerToken: number;
  config: ModelConfig;
}

function checkLoops(loops: readonly number[]): void {
  if (loops.length === 0) throw new Error("plan: loops must list at least one loop count");
  for (const r of loops) {
    if (!Number.isInteger(r) || r < 1)
      throw new Error(`plan: every loop count must be an integer ≥ 1, got ${r}`);
  }
}

function row(cfg: ModelConfig, role: PlanRow["role"], opts: FlopOptions): PlanRow {
  return {
    label: `${cfg.n_layers}⊗${cfg.n_loops}`,
    role,
    layers: cfg.n_layers,
    loops: cfg.n_loops,
    effectiveDepth: cfg.n_layers * cfg.n_loops,
    params: countParameters(cfg),
    flopsPerToken: flopsPerToken(cfg, opts).forwardPerToken,
    config: cfg,
  };
}

/** Scale hybrid attention layer indices when the stack is deepened (layer i of block k → k·N+i). */
function deepen(base: ModelConfig, r: number): ModelConfig {
  const n = base.n_layers;
  const attn: number[] = [];
  for (let k = 0; k < r; k++) for (const i of base.attn_layers) attn.push(k * n + i);
  return { ...base, n_layers: n * r, n_loops: 1, attn_layers: attn };
}

/**
 * The iso-parameter family of `base`: the same N layers looped R times for each R in `loops` (R = 1
 * the baseline).
 */
export function planIsoParameter(
  base: ModelConfig,
  loops: readonly number[],
  opts: FlopOptions = {},
): PlanRow[] {
  checkLoops(loops);
  return loops.map((r) => row({ ...base, n_loops: r }, r === 1 ? "baseline" : "looped", opts));
}

/**
 * The iso-FLOPs family of `base`: for each R, N⊗R and the non-looped (N·R)⊗1 of the same effective
 * depth.
 */
export function planIsoFlops(
  base: ModelConfig,
  loops: readonly number[],
  opts: FlopOptions = {},
): PlanRow[] {
  checkLoops(loops);
  const rows: PlanRow[] = [];
  for (const r of loops) {
    rows.push(row({ ...base, n_loops: r }, r === 1 ? "baseline" : "looped", opts));
    if (r > 1) rows.push(row(deepen(base, r), "baseline", opts));
  }
  return rows;
}

/** A plain-text table of plan rows. */
export function formatPlan(rows: readonly PlanRow[]): string {
  const head = ["model", "role", "eff. depth", "params", "fwd FLOPs/token"];
  const body = rows.map((r) => [
    r.label,
    r.role,
    String(r.effectiveDepth),
    r.params.toLocaleString("en-US"),
    r.flopsPerToken.toLocaleString("en-US"),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}
