import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { LoopedModel } from "./model.js";
import { withExitGate } from "./with-exit-gate.js";

const cfg = parseConfig({
  backbone: "mamba",
  vocab_size: 11,
  d_model: 16,
  n_layers: 1,
  n_loops: 2,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
});

describe("withExitGate", () => {
  it("keeps every weight and adds the gate a fresh gated model of the seed would have", () => {
    const base = new LoopedModel(cfg, { seed: 3 });
    const gated = withExitGate(base, { seed: 9 });
    const fresh = new LoopedModel({ ...cfg, exit_gate: true }, { seed: 9 });
    expect(gated.config.exit_gate).toBe(true);
    const before = new Map(base.parameters().map((p) => [p.name, p.tensor.data]));
    for (const p of gated.parameters()) {
      const want = before.get(p.name);
      if (want) expect(Array.from(p.tensor.data), p.name).toEqual(Array.from(want));
    }
    expect(Array.from(gated.exitGate!.weight.data)).toEqual(
      Array.from(fresh.exitGate!.weight.data),
    );
    expect(gated.exitGate!.bias.data[0]).toBe(0);
  });

  it("returns a model that already has a gate unchanged", () => {
    const m = new LoopedModel({ ...cfg, exit_gate: true });
    expect(withExitGate(m, { seed: 1 })).toBe(m);
  });
});
