/**
 * The WebGPU backend's Mamba-2 decode step (`gpuModelOps(ctx).mamba2Step`: kernels/mamba2-step.ts)
 * on SwiftShader against the CPU's `mamba2StepRaw`: the step's output (composed with the
 * backend's projections and gated norm, as the model composes it) and both states after several
 * tokens, with and without dt limits and norm groups; the state update alone (`absorb`) into
 * picked state rows, the others untouched; and rows that repeat or fall outside the state refused.
 */
import { type Mamba2Config, mamba2Dims, mamba2StepRaw } from "@loop/ssm-kernels";
import { Rng } from "@loop/tensor";
import { expectClose, gpuForTests } from "@loop/test-support-gpu";
import { gpuModelOps, releaseTransients } from "@loop/webgpu";
import { describe, expect, it } from "vitest";

const ctx = await gpuForTests("webgpu Mamba-2 decode step");

const TOL = { atol: 1e-4, rtol: 1e-4 };

const CASES: [string, Mamba2Config][] = [
  [
    "2 groups, no dt limit",
    {
      dModel: 16,
      dState: 8,
      headdim: 4,
      expand: 2,
      nGroups: 2,
      dConv: 4,
      chunkSize: 8,
      normEps: 1e-5,
    },
  ],
  [
    "dt limits, norm over all channels, a 2-tap conv",
    {
      dModel: 12,
      dState: 4,
      headdim: 6,
      expand: 2,
      nGroups: 1,
      dConv: 2,
      chunkSize: 8,
      normEps: 1e-5,
      dtLimit: [0.01, 0.2],
      normGroups: 1,
    },
  ],
];

function randomWeights(cfg: Mamba2Config, rng: Rng) {
  const { dInner: Di, nHeads: H, convDim: C, inProjDim: E } = mamba2Dims(cfg);
  const r = (n: number, s = 0.3) => rng.fillNormal(new Float32Array(n), 0, s);
  return {
    inProj: r(E * cfg.dModel),
    convWeight: r(C * cfg.dConv, 0.5),
    convBias: r(C, 0.1),
    dtBias: r(H, 0.5),
    aLog: rng.fillUniform(new Float32Array(H), -1, 1),
    d: r(H, 1),
    normWeight: rng.fillUniform(new Float32Array(Di), 0.5, 1.5),
    outProj: r(cfg.dModel * Di),
  };
}

describe.runIf(ctx)("the WebGPU Mamba-2 decode step against the CPU's", () => {
  it.each(CASES)("%s: output and states over 5 tokens", async (_name, cfg) => {
    const ops = gpuModelOps(ctx!);
    const dims = mamba2Dims(cfg);
    const { dInner: Di, nHeads: H, convDim: C } = dims;
    const rng = new Rng(7);
    const w = randomWeights(cfg, rng);
    const B = 3;
    const conv = rng.fillNormal(new Float32Array(B * C * (cfg.dConv - 1)));
    const ssm = rng.fillNormal(new Float32Array(B * H * cfg.headdim * cfg.dState));
    const up = (a: Float32Array, shape: number[]) => ops.upload(a, shape, { persistent: true });
    const dev = {
      conv: up(conv, [B, C, cfg.dConv - 1]),
      ssm: up(ssm, [B, H, cfg.headdim, cfg.dState]),
    };
    const dw = {
      convWeight: up(w.convWeight, [C, 1, cfg.dConv]),
      convBias: up(w.convBias, [C]),
      dtBias: up(w.dtBias, [H]),
      aLog: up(w.aLog, [H]),
      d: up(w.d, [H]),
    };
    const inProj = up(w.inProj, [dims.inProjDim, cfg.dModel]);
    const outProj = up(w.outProj, [cfg.dModel, Di]);
    const normW = up(w.normWeight, [Di]);
    for (let t = 0; t < 5; t++) {
      const u = rng.fillNormal(new Float32Array(B * cfg.dModel));
      const want = mamba2StepRaw(cfg, dims, w, B, u, conv, ssm);
      const got = ops.noGrad(() => {
        const zx = ops.linear(ops.upload(u, [B, cfg.dModel]), inProj);
        const r = ops.mamba2Step(cfg, zx, dev, dw);
        expect(r).not.toBeNull();
        const groups = cfg.normGroups ?? cfg.nGroups;
        return ops.linear(ops.gatedRmsnorm(r!.y, r!.z, normW, groups, cfg.normEps), outProj);
      });
      await expectClose(got, want, `token ${t}: output`, TOL);
      await expectClose(dev.conv, conv, `token ${t}: conv state`, TOL);
      await expectClose(dev.ssm, ssm, `token ${t}: ssm state`, TOL);
      releaseTransients(ctx!);
    }
    for (const t of [dev.conv, dev.ssm, ...Object.values(dw), inProj, outProj, normW]) t.dispose();
  });

  it("absorbs tokens into picked state rows only (early exit's skipped steps)", async () => {
    const cfg = CASES[0]![1];
    const ops = gpuModelOps(ctx!);
    const dims = mamba2Dims(cfg);
    const { nHeads: H, convDim: C, inProjDim: E } = dims;
    const rng = new Rng(11);
    const w = randomWeights(cfg, rng);
    const S = 3;
    const convW = C * (cfg.dConv - 1);
    const ssmW = H * cfg.headdim * cfg.dState;
    const conv = rng.fillNormal(new Float32Array(S * convW));
    const ssm = rng.fillNormal(new Float32Array(S * ssmW));
    const up = (a: Float32Array, shape: number[]) => ops.upload(a, shape, { persistent: true });
    const dev = {
      conv: up(conv, [S, C, cfg.dConv - 1]),
      ssm: up(ssm, [S, H, cfg.headdim, cfg.dState]),
    };
    const dw = {
      convWeight: up(w.convWeight, [C, cfg.dConv]),
      convBias: up(w.convBias, [C]),
      dtBias: up(w.dtBias, [H]),
      aLog: up(w.aLog, [H]),
      d: up(w.d, [H]),
    };
    const inProj = up(w.inProj, [E, cfg.dModel]);
    const rows = [2, 0];
    const rowsDev = ops.uploadInt(Int32Array.from(rows), [rows.length]);
    // the reference: the picked rows' states stepped on the CPU, the others untouched
    const pick = (a: Float32Array, width: number) => {
      const out = new Float32Array(rows.length * width);
      rows.forEach((s, j) => {
        out.set(a.subarray(s * width, (s + 1) * width), j * width);
      });
      return out;
    };
    const c2 = pick(conv, convW);
    const s2 = pick(ssm, ssmW);
    for (let t = 0; t < 3; t++) {
      const u = rng.fillNormal(new Float32Array(rows.length * cfg.dModel));
      mamba2StepRaw(cfg, dims, w, rows.length, u, c2, s2);
      const out = ops.noGrad(() =>
        ops.mamba2Step(cfg, ops.linear(ops.upload(u, [rows.length, cfg.dModel]), inProj), dev, dw, {
          rows: rowsDev,
          absorb: true,
        }),
      );
      expect(out).toBeNull();
    }
    const wantConv = conv.slice();
    const wantSsm = ssm.slice();
    rows.forEach((s, j) => {
      wantConv.set(c2.subarray(j * convW, (j + 1) * convW), s * convW);
      wantSsm.set(s2.subarray(j * ssmW, (j + 1) * ssmW), s * ssmW);
    });
    await expectClose(dev.conv, wantConv, "conv state", TOL);
    await expectClose(dev.ssm, wantSsm, "ssm state", TOL);
    // row 1 was not picked: exactly its values
    const gotSsm = await ops.read(dev.ssm);
    expect(Array.from(gotSsm.subarray(ssmW, 2 * ssmW))).toEqual(
      Array.from(ssm.subarray(ssmW, 2 * ssmW)),
    );
    for (const t of [dev.conv, dev.ssm, ...Object.values(dw), inProj]) t.dispose();
    releaseTransients(ctx!);
  });

  it("refuses rows that repeat or fall outside the state", () => {
    const cfg = CASES[0]![1];
    const ops = gpuModelOps(ctx!);
    const { nHeads: H, convDim: C, inProjDim: E } = mamba2Dims(cfg);
    const z = (shape: number[]) =>
      ops.upload(new Float32Array(shape.reduce((a, b) => a * b)), shape);
    const state = { conv: z([3, C, cfg.dConv - 1]), ssm: z([3, H, cfg.headdim, cfg.dState]) };
    const w = {
      convWeight: z([C, cfg.dConv]),
      convBias: z([C]),
      dtBias: z([H]),
      aLog: z([H]),
      d: z([H]),
    };
    const rows = (ids: number[]) => ops.uploadInt(Int32Array.from(ids), [ids.length]);
    expect(() => ops.mamba2Step(cfg, z([2, E]), state, w, { rows: rows([1, 1]) })).toThrow(
      "webgpu mamba2Step: rows must be 2 distinct state rows of 0..2, got [1,1] (a row repeats)",
    );
    expect(() => ops.mamba2Step(cfg, z([2, E]), state, w, { rows: rows([0, 5]) })).toThrow(
      "got row 5",
    );
    expect(() => ops.mamba2Step(cfg, z([2, E]), state, w)).toThrow(
      "the state holds 3 rows, zx 2 (pass rows to pick)",
    );
    releaseTransients(ctx!);
  });
});
