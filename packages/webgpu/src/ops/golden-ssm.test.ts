/**
 * The WebGPU Mamba-2 kernels against the independent PyTorch reference (testdata/golden/kernels,
 * made by tools/golden): the chunked SSD scan, the fused conv1d + SiLU + split, the gated
 * RMSNorm, the recurrent decode step, and prefill from a carried state — outputs, states and
 * every input gradient, within docs/formats.md's tolerance; the decode and prefill cases also
 * with a dt limit (time_step_limit) and prefill with the gated norm over all of d_inner.
 *
 * What the backend lacks, said in the test names: WebGPU has no plain (activation-free) causal
 * conv1d — the model only runs the fused conv1d-silu, checked here — so the `causal-conv1d` case
 * has no WebGPU path; and it has no prefill op, so prefill is checked through the ops the GPU
 * mixer composes (in_proj split, conv1d-silu from the carried conv state, SSD from the carried
 * SSM state, gated RMSNorm, out_proj). That path does not produce the final conv state (a copy
 * of the last K−1 inputs), so only y, the SSM state and the gradients are compared.
 */

import { expectGolden, loadKernelCase } from "@loop/test-support";
import { expectGpuGolden, expectGpuGrads, gpuForTests, gpuTensors } from "@loop/test-support-gpu";
import { describe, it } from "vitest";
import { backwardGpu } from "../backward.js";
import { type GpuTensor, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { causalConv1dSiluSplit } from "./conv-silu-split.js";
import { gatedRmsnorm } from "./gated-rmsnorm.js";
import { linearSplit } from "./linear-split.js";
import { softplusBias } from "./mamba2-ops.js";
import { mamba2StepState } from "./mamba2-step.js";
import { linear } from "./matmul.js";
import { concat, reshape } from "./shape.js";
import { ssdScanChunked } from "./ssd-scan-chunked.js";
import { exp, neg } from "./unary.js";

const ctx = await gpuForTests("webgpu golden kernels (Mamba-2)");

const WEIGHTS = [
  "in_proj.weight",
  "conv1d.weight",
  "conv1d.bias",
  "dt_bias",
  "A_log",
  "D",
  "norm.weight",
  "out_proj.weight",
];

interface MixerSettings {
  d_model: number;
  norm_eps: number;
  ssm: {
    d_state: number;
    headdim: number;
    expand: number;
    n_groups: number;
    d_conv: number;
    chunk_size: number;
    time_step_limit?: [number, number];
    norm_groups?: "whole";
  };
}

/** The gated norm's group count of a case (1 for "whole"). */
function normGroups(s: MixerSettings): number {
  return s.ssm.norm_groups === "whole" ? 1 : s.ssm.n_groups;
}

function sizes(s: MixerSettings) {
  const Di = s.ssm.expand * s.d_model;
  const H = Di / s.ssm.headdim;
  const GN = s.ssm.n_groups * s.ssm.d_state;
  return { Di, H, GN, C: Di + 2 * GN };
}

describe.runIf(ctx)(
  "golden kernels, webgpu: SSD scan, conv1d-silu, gated RMSNorm, decode, prefill (no plain conv1d on webgpu: the model runs the fused conv1d-silu)",
  () => {
    for (const chunkSize of [16, 64])
      it(`ssd-scan, chunked L=${chunkSize}, matches the reference`, async () => {
        const c = loadKernelCase("ssd-scan");
        const names = ["x", "dt", "A", "B", "C"];
        const t = gpuTensors(ctx!, c, names, names);
        const { y } = ssdScanChunked(t.x!, t.dt!, t.A!, t.B!, t.C!, { chunkSize });
        await expectGpuGolden("y", y, c, "y", "forward");
        await expectGpuGrads(ctx!, c, y, t, names);
        releaseTransients(ctx!);
      });

    it("conv1d-silu (fused conv, SiLU, split; from an initial conv state) matches the reference", async () => {
      const c = loadKernelCase("conv1d-silu");
      const names = ["x", "weight", "bias", "initial_state"];
      const t = gpuTensors(ctx!, c, names, names);
      const widths = c.spec.settings.widths as number[];
      const pieces = causalConv1dSiluSplit(t.x!, t.weight!, t.bias!, t.initial_state!, widths);
      const y = concat(pieces);
      await expectGpuGolden("y", y, c, "y", "forward");
      await expectGpuGrads(ctx!, c, y, t, names);
      releaseTransients(ctx!);
    });

    it("gated-rmsnorm matches the reference", async () => {
      const c = loadKernelCase("gated-rmsnorm");
      const names = ["x", "z", "weight"];
      const t = gpuTensors(ctx!, c, names, names);
      const s = c.spec.settings as { n_groups: number; eps: number };
      const y = gatedRmsnorm(t.x!, t.z!, t.weight!, s.n_groups, s.eps);
      await expectGpuGolden("y", y, c, "y", "forward");
      await expectGpuGrads(ctx!, c, y, t, names);
      releaseTransients(ctx!);
    });

    for (const name of ["mamba2-step", "mamba2-step-dt-limit"])
      it(`${name} (decode: mamba2StepState between in_proj and the gated norm, out_proj) matches the reference`, async () => {
        const c = loadKernelCase(name);
        const s = c.spec.settings as unknown as MixerSettings;
        const w = gpuTensors(ctx!, c, WEIGHTS);
        const state = {
          conv: uploadTensor(ctx!, c.copy("conv_state"), c.get("conv_state").shape, {
            persistent: true,
          }),
          ssm: uploadTensor(ctx!, c.copy("ssm_state"), c.get("ssm_state").shape, {
            persistent: true,
          }),
        };
        const [B, T, D] = c.get("u").shape as [number, number, number];
        const u = c.get("u").data;
        const cfg = {
          dState: s.ssm.d_state,
          headdim: s.ssm.headdim,
          nGroups: s.ssm.n_groups,
          dConv: s.ssm.d_conv,
          ...(s.ssm.time_step_limit ? { dtLimit: s.ssm.time_step_limit } : {}),
        };
        const y = new Float32Array(B * T * D);
        for (let t = 0; t < T; t++) {
          const ut = new Float32Array(B * D);
          for (let b = 0; b < B; b++)
            ut.set(u.subarray((b * T + t) * D, (b * T + t + 1) * D), b * D);
          const zx = linear(uploadTensor(ctx!, ut, [B, D]), w["in_proj.weight"]!);
          const r = mamba2StepState(cfg, zx, state, {
            convWeight: w["conv1d.weight"]!,
            convBias: w["conv1d.bias"]!,
            dtBias: w.dt_bias!,
            aLog: w.A_log!,
            d: w.D!,
          });
          const normed = gatedRmsnorm(r.y, r.z, w["norm.weight"]!, normGroups(s), s.norm_eps);
          const out = await linear(normed, w["out_proj.weight"]!).read();
          for (let b = 0; b < B; b++) y.set(out.subarray(b * D, (b + 1) * D), (b * T + t) * D);
          releaseTransients(ctx!);
        }
        expectGolden("y", y, c.get("y").data, "forward");
        await expectGpuGolden("conv_state.out", state.conv, c, "conv_state.out", "forward");
        await expectGpuGolden("ssm_state.out", state.ssm, c, "ssm_state.out", "forward");
        state.conv.dispose();
        state.ssm.dispose();
      });

    for (const name of ["mamba2-prefill", "mamba2-prefill-dt-limit", "mamba2-prefill-norm-whole"])
      it(`${name} (no webgpu prefill op: composed from its ops; conv state out not produced) matches the reference`, async () => {
        const c = loadKernelCase(name);
        const s = c.spec.settings as unknown as MixerSettings;
        const { Di, H, GN, C } = sizes(s);
        const names = ["u", "conv_state", "ssm_state", ...WEIGHTS];
        const t = gpuTensors(ctx!, c, names, ["u", ...WEIGHTS]);
        const [B, T] = c.get("u").shape as [number, number, number];
        const { headdim: P, d_state: N, n_groups: G, chunk_size: chunkSize } = s.ssm;
        const [z, xbc, dtRaw] = linearSplit(t.u!, t["in_proj.weight"]!, [Di, C, H]) as GpuTensor[];
        const [xs, bs, cs] = causalConv1dSiluSplit(
          xbc!,
          t["conv1d.weight"]!,
          t["conv1d.bias"]!,
          t.conv_state!,
          [Di, GN, GN],
        ) as GpuTensor[];
        const scan = ssdScanChunked(
          reshape(xs!, [B, T, H, P]),
          softplusBias(dtRaw!, t.dt_bias!, s.ssm.time_step_limit ?? null),
          neg(exp(t.A_log!)),
          reshape(bs!, [B, T, G, N]),
          reshape(cs!, [B, T, G, N]),
          { chunkSize, initialState: t.ssm_state!, D: t.D! },
        );
        const normed = gatedRmsnorm(
          reshape(scan.y, [B, T, Di]),
          z!,
          t["norm.weight"]!,
          normGroups(s),
          s.norm_eps,
        );
        const y = linear(normed, t["out_proj.weight"]!);
        await expectGpuGolden("y", y, c, "y", "forward");
        await expectGpuGolden("ssm_state.out", scan.state, c, "ssm_state.out", "forward");
        backwardGpu(y, uploadTensor(ctx!, c.copy("dy"), c.get("dy").shape));
        for (const n of ["u", ...WEIGHTS])
          await expectGpuGolden(`grad.${n}`, t[n]!.grad, c, `grad.${n}`, "grad");
        releaseTransients(ctx!);
      });
  },
);
