/**
 * The WebGPU attention kernels against the independent PyTorch reference
 * (testdata/golden/kernels, made by tools/golden): causal GQA attention, RoPE, the SwiGLU gate,
 * and the attention mixer's composition (gpuModelOps' projectedAttention, then o_proj; what
 * @loop/attention's attentionMix runs on this backend) — forward and every input gradient, within
 * docs/formats.md's tolerance. WebGPU has no KV cache (it does not decode attention token by
 * token), so the attention-decode case is checked through the mixer's full causal forward, which
 * is what its decoding must reproduce.
 */

import { loadKernelCase } from "@loop/test-support";
import { expectGpuGolden, expectGpuGrads, gpuForTests, gpuTensors } from "@loop/test-support-gpu";
import { describe, it } from "vitest";
import { releaseTransients } from "../gpu-tensor.js";
import { gpuModelOps } from "../model-ops.js";
import { attention } from "./attention.js";
import { rope } from "./rope.js";
import { swiglu } from "./swiglu.js";

const ctx = await gpuForTests("webgpu golden kernels (attention)");

describe.runIf(ctx)("golden kernels, webgpu: attention, RoPE, SwiGLU, attention mixer", () => {
  it("attention matches the reference", async () => {
    const c = loadKernelCase("attention");
    const names = ["q", "k", "v"];
    const t = gpuTensors(ctx!, c, names, names);
    const y = attention(t.q!, t.k!, t.v!);
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, names);
    releaseTransients(ctx!);
  });

  it("rope matches the reference", async () => {
    const c = loadKernelCase("rope");
    const t = gpuTensors(ctx!, c, ["x"], ["x"]);
    const s = c.spec.settings as { theta: number; position_offset: number };
    const y = rope(t.x!, { theta: s.theta, offset: s.position_offset });
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, ["x"]);
    releaseTransients(ctx!);
  });

  it("swiglu matches the reference", async () => {
    const c = loadKernelCase("swiglu");
    const t = gpuTensors(ctx!, c, ["gate", "up"], ["gate", "up"]);
    const y = swiglu(t.gate!, t.up!);
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, ["gate", "up"]);
    releaseTransients(ctx!);
  });

  it("attention-decode (no KV cache on webgpu: through the mixer's causal forward) matches the reference", async () => {
    const c = loadKernelCase("attention-decode");
    const s = c.spec.settings as Record<string, number>;
    const weights = ["q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"];
    const t = gpuTensors(ctx!, c, ["u", ...weights], ["u", ...weights]);
    const ops = gpuModelOps(ctx!);
    const opts = { nHeads: s.n_heads!, nKvHeads: s.n_kv_heads!, rope: { theta: s.rope_theta } };
    const attn = ops.projectedAttention(
      t.u!,
      t["q_proj.weight"]!,
      t["k_proj.weight"]!,
      t["v_proj.weight"]!,
      opts,
    );
    const y = ops.linear(attn, t["o_proj.weight"]!);
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, ["u", ...weights]);
    releaseTransients(ctx!);
  });
});
