/**
 * The CUDA backend's launch plan and memory, on the host: a training step of tiny Mamba-2 and
 * Transformer models (@loop/train's deviceStepEngine over `cudaBackend` on a recording device,
 * which runs nothing and records every launch and device allocation — the model's own code,
 * the backend's own ops). Pinned: the launches of one step as fixed + a·L·R + b·L (solved from
 * (L, R) = (1,1), (1,2), (2,1), checked at (2,3)), and that a step allocates nothing on the
 * device after the first (the caching allocator serves it). A change that adds launches fails
 * here: update docs/cuda.md ("Launch plan") with the new figures.
 */
import { type CudaBackend, type CudaPrecision, cudaBackend, recordingDevice } from "@loop/cuda";
import { LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, type TrainOptions } from "@loop/train";
import { describe, expect, it } from "vitest";
import {
  STEP_MAMBA as MAMBA,
  STEP_TRAIN as o,
  STEP_SHAPE as SHAPE,
  STEP_TRANSFORMER as TRANSFORMER,
} from "./step-models.test-util.js";

interface StepCount {
  launches: number;
  deviceAllocs: number;
}

/** Launches and device allocations of each of `steps` steps of `config`. */
async function steps(
  config: ModelConfigInput,
  n = 3,
  precision: CudaPrecision = "fp32",
  train: TrainOptions = o,
): Promise<StepCount[]> {
  const cfg = parseConfig(config);
  const model = new LoopedModel(cfg, { seed: 0 });
  const dev = recordingDevice();
  const backend: CudaBackend = cudaBackend(dev, { precision });
  const engine = deviceStepEngine(deviceTraining(model, backend.ops, train), train);
  const rng = new Rng(1);
  const count = SHAPE.batch * SHAPE.seq;
  const tokens = new Int32Array(count).map(() => rng.int(cfg.vocab_size));
  const targets = new Int32Array(count).map(() => rng.int(cfg.vocab_size));
  const batch = { tokens, targets, shape: [SHAPE.batch, SHAPE.seq] as [number, number] };
  const out: StepCount[] = [];
  try {
    for (let s = 0; s < n; s++) {
      const l0 = dev.launches.length;
      const a0 = dev.allocs;
      await engine.step([batch], train.lr);
      out.push({ launches: dev.launches.length - l0, deviceAllocs: dev.allocs - a0 });
    }
  } finally {
    engine.dispose();
  }
  return out;
}

async function formula(config: ModelConfigInput) {
  const at = async (L: number, R: number) =>
    (await steps({ ...config, n_layers: L, n_loops: R } as ModelConfigInput, 2))[1]!.launches;
  const d11 = await at(1, 1);
  const d12 = await at(1, 2);
  const d21 = await at(2, 1);
  const perLayerApplication = d12 - d11;
  const perLayer = d21 - d11 - perLayerApplication;
  return { fixed: d11 - perLayerApplication - perLayer, perLayerApplication, perLayer };
}

describe("cuda: the launch plan of a training step (recording device)", () => {
  for (const [name, config, pinned] of [
    ["Mamba-2", MAMBA, { fixed: 20, perLayerApplication: 42, perLayer: 17 }],
    ["Transformer", TRANSFORMER, { fixed: 20, perLayerApplication: 38, perLayer: 18 }],
  ] as const)
    it(`${name}: fixed + a·L·R + b·L launches per step`, async () => {
      const f = await formula(config);
      console.log(`cuda ${name}: ${JSON.stringify(f)}`);
      const [, steady] = await steps({ ...config, n_layers: 2, n_loops: 3 } as ModelConfigInput, 2);
      expect(steady!.launches).toBe(f.fixed + f.perLayerApplication * 6 + f.perLayer * 2);
      expect(f).toEqual(pinned);
    });

  for (const precision of ["fp32", "bf16"] as const)
    it(`a step allocates nothing on the device after the first (${precision})`, async () => {
      for (const config of [MAMBA, TRANSFORMER]) {
        const counts = await steps({ ...config, n_layers: 2, n_loops: 2 }, 4, precision);
        expect(counts[0]!.deviceAllocs).toBeGreaterThan(0);
        expect(counts.slice(1).map((c) => c.deviceAllocs)).toEqual([0, 0, 0]);
      }
    });

  it("with activation checkpointing: more launches (the recomputed forwards), still no allocation after the first step", async () => {
    const config = { ...MAMBA, n_layers: 2, n_loops: 2 };
    const plain = await steps(config, 3);
    const ckpt = await steps(config, 3, "fp32", { ...o, checkpointing: true });
    expect(ckpt[2]!.launches).toBeGreaterThan(plain[2]!.launches);
    expect(ckpt.slice(1).map((c) => c.deviceAllocs)).toEqual([0, 0]);
  });
});
