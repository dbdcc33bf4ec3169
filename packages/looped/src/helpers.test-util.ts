/** Helpers shared by this package's decoding tests (not exported from the package). */
import { KvCache } from "@loop/attention";
import type { Mamba2State } from "@loop/ssm-kernels";
import { relErr } from "@loop/test-support";
import { parseConfig } from "./config.js";
import type { DecodeState } from "./decode.js";
import { LoopedModel } from "./model.js";
import { tinyTwoLayers } from "./tiny-config.test-util.js";

export { relErr };

/*
 * Tolerance: prefill runs Mamba-2 layers through the chunked SSD scan and decodeStep through the
 * one-token recurrence; both are float32 and sum the same terms in a different order (and the
 * projections multiply [B·T, D] instead of [B, D] matrices), so results differ by rounding:
 * ~1e-7 relative per op, compounded through R·N layers and the carried states (the largest
 * difference seen here is 2e-6 of the largest magnitude). 1e-5 leaves room for another thread
 * count or kernel set and stays far below a real error (a wrong position, a dropped conv tap or
 * a state not carried moves these values by 1e-2 and more).
 */
export const TOL = 1e-5;

/** Deterministic token ids < 11: B sequences of length T. */
export function tokens(B: number, T: number, salt = 0): number[][] {
  return Array.from({ length: B }, (_, b) =>
    Array.from({ length: T }, (_, t) => (5 * b + 3 * t + 7 * salt + ((t * t) % 4)) % 11),
  );
}

/**
 * The largest relative difference between two decode states over every (loop step, layer) state
 * (conv, ssm; keys, values) and where it is; Infinity where positions, cache lengths or kinds
 * differ.
 */
export function stateDiff(got: DecodeState, want: DecodeState): { err: number; at: string } {
  let worst = {
    err: got.position === want.position ? 0 : Number.POSITIVE_INFINITY,
    at: "position",
  };
  const see = (err: number, at: string) => {
    if (!(err <= worst.err)) worst = { err, at };
  };
  got.states.forEach((layers, r) => {
    layers.forEach((x, i) => {
      const g = x as Mamba2State | KvCache;
      const w = want.states[r]![i]! as Mamba2State | KvCache;
      const at = `step ${r + 1}, layer ${i}`;
      if (!(g instanceof KvCache) && !(w instanceof KvCache)) {
        see(relErr(g.conv, w.conv), `${at} conv`);
        see(relErr(g.ssm, w.ssm), `${at} ssm`);
      } else if (g instanceof KvCache && w instanceof KvCache) {
        see(g.length === w.length ? 0 : Number.POSITIVE_INFINITY, `${at} length`);
        see(relErr(g.k, w.k), `${at} k`);
        see(relErr(g.v, w.v), `${at} v`);
      } else see(Number.POSITIVE_INFINITY, `${at} kind`);
    });
  });
  return worst;
}

/** The decoding tests' models: R loop steps of two tiny layers, with an exit gate. */
export const R = 4;
const tiny = { ...tinyTwoLayers(R), exit_gate: true };
// loop_norm makes readout(r) = h(r), which decode-early-exit.test.ts's KV propagation check reads off.
export const configs = {
  mamba: parseConfig({ ...tiny, backbone: "mamba" }),
  "hybrid, loop_norm": parseConfig({
    ...tiny,
    backbone: "hybrid",
    attn_layers: [1],
    loop_norm: true,
  }),
  hybrid: parseConfig({ ...tiny, backbone: "hybrid", attn_layers: [0] }),
  "transformer, loop_norm": parseConfig({
    ...tiny,
    backbone: "transformer",
    mlp: { d_ff: 24 },
    tie_embeddings: false,
    loop_norm: true,
  }),
};

/** A model whose gate spreads the exits over several steps (the random init is too timid). */
export function gatedModel(cfg: (typeof configs)["mamba"], seed: number): LoopedModel {
  const m = new LoopedModel(cfg, { seed });
  const g = m.exitGate!;
  for (let d = 0; d < g.weight.size; d++) g.weight.data[d]! *= 6;
  g.bias.data[0] = -0.5;
  return m;
}
