import { Rng, Tensor } from "@loop/tensor";
import { expectClose, gpuForTests, randomData } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { gatedRmsnorm, mamba2StepState } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { type Mamba2Config, Mamba2Mixer } from "../index.js";

const ctx = await gpuForTests("webgpu mamba2 step");

/** rows × cols ← a [rows, k] · bᵀ for b [cols, k] (the test's in_proj and out_proj). */
function matmulT(a: Float32Array, b: Float32Array, rows: number, cols: number, k: number) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      let s = 0;
      for (let i = 0; i < k; i++) s += a[r * k + i]! * b[c * k + i]!;
      out[r * cols + c] = s;
    }
  return out;
}

const CFG: Mamba2Config = {
  dModel: 8,
  dState: 5,
  headdim: 4,
  expand: 2,
  nGroups: 2,
  dConv: 4,
  chunkSize: 8,
  normEps: 1e-5,
};

/**
 * A mixer of `cfg` (weights from `seed`) with a random non-zero state of `batch` rows, as after
 * a prefill, on the CPU and uploaded.
 */
function mixerWithState(cfg: Mamba2Config, seed: number, batch: number, persistent: boolean) {
  const m = new Mamba2Mixer(cfg, { rng: new Rng(seed) });
  const cpuState = m.initState(batch);
  new Rng(seed + 1).fillNormal(cpuState.conv, 0, 1);
  new Rng(seed + 2).fillNormal(cpuState.ssm, 0, 1);
  const state = {
    conv: uploadTensor(ctx!, cpuState.conv, [batch, m.convDim, cfg.dConv - 1], { persistent }),
    ssm: uploadTensor(ctx!, cpuState.ssm, [batch, m.nHeads, cfg.headdim, cfg.dState], {
      persistent,
    }),
  };
  return { m, cpuState, state };
}

/** The step's weights of `m`, uploaded (transients: upload again after releaseTransients). */
function stepWeights(m: Mamba2Mixer) {
  const up = (t: Tensor) => uploadTensor(ctx!, t.data, t.shape);
  return {
    convWeight: up(m.convWeight),
    convBias: up(m.convBias),
    dtBias: up(m.dtBias),
    aLog: up(m.aLog),
    d: up(m.d),
  };
}

describe.runIf(ctx)("webgpu Mamba-2 decode step", () => {
  it("advances the state and gives the outputs of the CPU step, token after token", async () => {
    const cfg = CFG;
    const batch = 2;
    const { m, cpuState, state } = mixerWithState(cfg, 7, batch, true);
    const { inProjDim: E, dInner: Di } = m;
    for (let step = 0; step < 3; step++) {
      const u = randomData([batch, cfg.dModel], 100 + step);
      const want = m.step(cpuState, new Tensor(u, [batch, cfg.dModel])).data;
      const zx = uploadTensor(ctx!, matmulT(u, m.inProj.data, batch, E, cfg.dModel), [batch, E]);
      const { y, z } = mamba2StepState(cfg, zx, state, stepWeights(m));
      const norm = uploadTensor(ctx!, m.normWeight.data, m.normWeight.shape);
      const normed = gatedRmsnorm(y, z, norm, cfg.nGroups, cfg.normEps);
      const got = matmulT(await normed.read(), m.outProj.data, batch, cfg.dModel, Di);
      await expectClose(got, want, `output of step ${step}`);
      await expectClose(state.conv, cpuState.conv, "conv state", 1e-6);
      await expectClose(state.ssm, cpuState.ssm, "ssm state");
      releaseTransients(ctx!);
    }
    state.conv.dispose();
    state.ssm.dispose();
  });

  it("takes tokens into chosen state rows only, as Mamba2Mixer.absorb", async () => {
    const cfg = { ...CFG, dModel: 6, dState: 3, headdim: 3, nGroups: 1, dConv: 3 };
    const { m, cpuState, state } = mixerWithState(cfg, 17, 3, false);
    const E = m.inProjDim;
    const u = randomData([2, cfg.dModel], 200);
    m.absorb(cpuState, new Tensor(u, [2, cfg.dModel]), [2, 0]);
    const zx = uploadTensor(ctx!, matmulT(u, m.inProj.data, 2, E, cfg.dModel), [2, E]);
    mamba2StepState(
      cfg,
      zx,
      state,
      stepWeights(m),
      uploadTensor(ctx!, Int32Array.from([2, 0]), [2]),
    );
    await expectClose(state.conv, cpuState.conv, "conv state", 1e-6);
    await expectClose(state.ssm, cpuState.ssm, "ssm state");
    releaseTransients(ctx!);
  });

  it("names the problem on bad input", () => {
    const cfg = { dState: 2, headdim: 2, nGroups: 1, dConv: 3 };
    const t = (shape: number[]) =>
      uploadTensor(ctx!, new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
    // H = 2, Di = 4, C = 8, E = 14
    const w = {
      convWeight: t([8, 1, 3]),
      convBias: t([8]),
      dtBias: t([2]),
      aLog: t([2]),
      d: t([2]),
    };
    const state = { conv: t([1, 8, 2]), ssm: t([1, 2, 2, 2]) };
    expect(() => mamba2StepState(cfg, t([1, 13]), state, w)).toThrow(
      /mamba2StepState: zx must be \[B,14\] \(z \| xBC \| dt\), got \[1,13\]/,
    );
    expect(() => mamba2StepState(cfg, t([1, 14]), { ...state, ssm: t([1, 2, 2, 3]) }, w)).toThrow(
      /state.ssm must be \[1,2,2,2\], got \[1,2,2,3\]/,
    );
    releaseTransients(ctx!);
  });
});
