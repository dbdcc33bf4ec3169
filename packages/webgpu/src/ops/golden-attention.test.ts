/**
 * The WebGPU attention kernels against the independent PyTorch reference
 * (testdata/golden/kernels, made by tools/golden): causal GQA attention, RoPE, the SwiGLU gate,
 * and the attention mixer's composition over gpuModelOps' kernels (linears, rope of q and k
 * together, attention, then o_proj: what @loop/attention's projected attention runs on this
 * backend) — forward and every input gradient, within
 * docs/formats.md's tolerance. The attention-decode case is checked both through the mixer's full
 * causal forward and token by token through the KV cache on the device (`attendStep`, every
 * position one step after the other: the prompt's positions as well, a prefill being the
 * forward's business).
 */

import { expectGolden, loadKernelCase } from "@loop/test-support";
import { expectGpuGolden, expectGpuGrads, gpuForTests, gpuTensors } from "@loop/test-support-gpu";
import { describe, it } from "vitest";
import { type GpuTensor, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { gpuModelOps } from "../model-ops.js";
import { gpuNoGrad } from "../tape.js";
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

  it("attention-decode through the mixer's causal forward matches the reference", async () => {
    const c = loadKernelCase("attention-decode");
    const s = c.spec.settings as Record<string, number>;
    const weights = ["q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"];
    const t = gpuTensors(ctx!, c, ["u", ...weights], ["u", ...weights]);
    const ops = gpuModelOps(ctx!);
    const [B, T, D] = t.u!.shape as [number, number, number];
    const [Hq, Hkv] = [s.n_heads!, s.n_kv_heads!];
    const hd = D / Hq;
    // projected attention as @loop/attention composes it over the kernels: q, k, v as one
    // product (linears), q and k rotated together, causal attention, then o_proj
    const [uq, uk, uv] = ops.linears!(t.u!, [
      t["q_proj.weight"]!,
      t["k_proj.weight"]!,
      t["v_proj.weight"]!,
    ]) as [GpuTensor, GpuTensor, GpuTensor];
    const [q, k] = ops.rope([ops.reshape(uq, [B, T, Hq, hd]), ops.reshape(uk, [B, T, Hkv, hd])], {
      theta: s.rope_theta,
    }) as [GpuTensor, GpuTensor];
    const attn = ops.attention(q, k, ops.reshape(uv, [B, T, Hkv, hd]), {});
    const y = ops.linear(ops.reshape(attn, [B, T, D]), t["o_proj.weight"]!);
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, ["u", ...weights]);
    releaseTransients(ctx!);
  });

  it("attention-decode token by token through the device KV cache matches the reference", async () => {
    const c = loadKernelCase("attention-decode");
    const s = c.spec.settings as Record<string, number>;
    const [B, T, D] = c.get("u").shape as [number, number, number];
    const [Hq, Hkv] = [s.n_heads!, s.n_kv_heads!];
    const hd = D / Hq;
    const ops = gpuModelOps(ctx!);
    const w = (n: string) => uploadTensor(ctx!, c.copy(n), c.get(n).shape, { persistent: true });
    const [wq, wk, wv, wo] = ["q", "k", "v", "o"].map((n) => w(`${n}_proj.weight`)) as [
      GpuTensor,
      GpuTensor,
      GpuTensor,
      GpuTensor,
    ];
    const zeros = new Float32Array(B * Hkv * T * hd);
    const cache = {
      k: uploadTensor(ctx!, zeros, [B, Hkv, T, hd], { persistent: true }),
      v: uploadTensor(ctx!, zeros, [B, Hkv, T, hd], { persistent: true }),
    };
    const u = c.copy("u");
    const y = new Float32Array(B * T * D);
    for (let t = 0; t < T; t++) {
      const ut = new Float32Array(B * D);
      for (let b = 0; b < B; b++) ut.set(u.subarray((b * T + t) * D, (b * T + t + 1) * D), b * D);
      const out = gpuNoGrad(() => {
        const x = uploadTensor(ctx!, ut, [B, D]);
        const proj = (wt: GpuTensor, H: number) => ops.reshape(ops.linear(x, wt), [B, H, hd]);
        const a = ops.attendStep(cache, proj(wq, Hq), proj(wk, Hkv), proj(wv, Hkv), t, {
          theta: s.rope_theta!,
        });
        return ops.linear(ops.reshape(a!, [B, D]), wo);
      });
      const yt = await out.read();
      for (let b = 0; b < B; b++) y.set(yt.subarray(b * D, (b + 1) * D), (b * T + t) * D);
      releaseTransients(ctx!);
    }
    expectGolden("y", y, c.get("y").data, "forward");
    for (const t of [wq, wk, wv, wo, cache.k, cache.v]) t.dispose();
  });
});
