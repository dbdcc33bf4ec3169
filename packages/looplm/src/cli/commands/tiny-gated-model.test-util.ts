/**
 * Test support: the tiny Mamba-2 `1⊗3` the eval and --exit command tests save and read, with
 * or without an exit gate (its weights set so the gate's exits spread over the steps).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoopedModel, makeConfig } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";

/** A `1⊗3` model of vocabulary `vocab`, with a gate when `gate`. */
export function tinyModel(vocab: number, gate: boolean): LoopedModel {
  const cfg = makeConfig({
    backbone: "mamba",
    vocab_size: vocab,
    d_model: 16,
    n_layers: 1,
    n_loops: 3,
    exit_gate: gate,
    ssm: { d_state: 8, headdim: 8, chunk_size: 8 },
  });
  const m = new LoopedModel(cfg, { seed: 2 });
  const w = m.exitGate?.weight.data ?? new Float32Array(0);
  for (let i = 0; i < w.length; i++) w[i] = (i % 3) - 1;
  return m;
}

/**
 * A finished mano run at `runDir`: the gated model's `final` checkpoint and its run.json (stage
 * gate2), which is what eval reads to find the task and the gate.
 */
export function saveGatedRun(runDir: string): void {
  const gated = tinyModel(32, true);
  saveCheckpoint(join(runDir, "final"), gated);
  writeFileSync(
    join(runDir, "run.json"),
    JSON.stringify({
      task: { name: "mano", max_ops: 2 },
      model: gated.config,
      train: {},
      seed: 0,
      stage: "gate2",
    }),
  );
}
