/*
 * Mano modular arithmetic: the looped N⊗R against N⊗1 (iso-parameter) and N·R⊗1 (iso-FLOPs).
 */
import { beats } from "./study-claims.js";
import type { StudyDef } from "./study-types.js";

/** The Mano study at cpu scale (true: L = 2) or the paper's (L = 24). */
export function mano(cpu: boolean): StudyDef {
  const [N, R] = cpu ? [2, 4] : [4, 6];
  const looped = `${N}⊗${R}`;
  const flat = `${N * R}⊗1`;
  const shallow = `${N}⊗1`;
  return {
    name: "mano",
    title: "Mano modular arithmetic: iso-parameter and iso-FLOPs",
    notes: cpu
      ? "L = 2 operators (chance 4.3 %), d_model 128, 20,000 steps of 64: 2⊗4 against 2⊗1 (iso-parameter) and 8⊗1 (iso-FLOPs). Pilots (docs/results/pilots.md): L = 4 and L = 10 did not start to learn within 6,000 steps, L = 1 is solved by 2⊗1 alone; at L = 2 and d_model 64 no model reached 90 % within 30,000 steps, at d_model 128 8⊗1 reaches 99 % within these 20,000 (4⊗1 only 61 % within 15,000)."
      : "The paper's L = 24: 4⊗6 against 4⊗1 and 24⊗1.",
    arms: [
      {
        id: "iso-flops",
        protocol: "iso-flops",
        task: { task: "mano", maxOps: cpu ? 2 : 24 },
        // cpu: d_model 128, where the pilots found a model that learns L = 2 (round E)
        model: cpu
          ? { dModel: 128, dState: 16, headdim: 16, chunk: 32 }
          : { dModel: 128, dState: 32, headdim: 32, chunk: 64 },
        base: N,
        loops: [1, R],
        train: cpu
          ? { steps: 20000, batch: 64, lr: 3e-3, warmup: 500, evalEvery: 1000, evalCount: 512 }
          : { steps: 50000, batch: 64, lr: 1e-3, warmup: 1000, evalEvery: 2000, evalCount: 1000 },
        paper: { [shallow]: "7.50 % (4⊗1)", [looped]: "99.35 % (4⊗6)", [flat]: "37.45 % (24⊗1)" },
        // accuracy at every ℓ = 1..L beside the one at ℓ = L (the pilots' count)
        perLength: { count: 1024 },
      },
    ],
    claims: [
      beats(
        `iso-parameter: ${looped} beats ${shallow}`,
        `iso-flops/${looped}`,
        `iso-flops/${shallow}`,
      ),
      beats(
        `iso-FLOPs: ${looped} beats ${flat} (same depth, ${R}× the parameters)`,
        `iso-flops/${looped}`,
        `iso-flops/${flat}`,
      ),
    ],
  };
}
