/**
 * The command encoding of a training step on webgpu, counted by the context: the dispatches of
 * one step of a tiny Mamba-2 and a tiny Transformer model as a formula in the layers L and loops
 * R (solved from three models, then checked at a fourth), each kernel's share of it, and the
 * bind-group cache (a step that binds the same buffers as the previous one creates no bind
 * group). The formula's coefficients are pinned: a change that adds dispatches fails here
 * (update docs/gpu.md, "Dispatches per step", with the new figures). The attention mixer's own
 * share (a hybrid whose every layer is attention: no MLP) is held to a target of at most 25
 * dispatches per layer application, as is a whole Transformer layer (with its MLP), and a Mamba-2
 * layer's to its target of at most 30 — also at 512 tokens, where the column sums have two row
 * blocks and the weight gradients split K. Dawn + SwiftShader; skipped with one printed line where
 * no WebGPU adapter exists, a failure under CI.
 */
import { gpuForTests } from "@loop/test-support-gpu";
import { splitKFor } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { breakdownText, dispatchesAt, dispatchFormula, stepCounters } from "./gpu-dispatches.js";
import {
  STEP_BASE as BASE,
  STEP_MAMBA as MAMBA,
  STEP_TRAIN as o,
  STEP_SHAPE as SHAPE,
  STEP_TRANSFORMER as TRANSFORMER,
} from "./step-models.test-util.js";

const ctx = await gpuForTests("webgpu dispatch counts");

describe.skipIf(!ctx)("webgpu: dispatches and bind groups of a training step", () => {
  // pinned formulas, and the target of dispatches per layer application
  for (const [name, config, pinned, target] of [
    ["Mamba-2", MAMBA, { fixed: 28, perLayerApplication: 30, perLayer: 18 }, 30],
    ["Transformer", TRANSFORMER, { fixed: 28, perLayerApplication: 25, perLayer: 18 }, 25],
  ] as const)
    it(`${name}: fixed + a·L·R + b·L dispatches per step`, async () => {
      const { byKernel, ...f } = await dispatchFormula(ctx!, config, SHAPE, o);
      console.log(`${name}: ${JSON.stringify(f)}`);
      for (const key of ["perLayerApplication", "perLayer", "fixed"] as const)
        console.log(`  ${key} by kernel: ${breakdownText({ ...f, byKernel }, key)}`);
      const [, steady] = await stepCounters(ctx!, { ...config, n_layers: 2, n_loops: 3 }, SHAPE, o);
      expect(steady!.dispatches).toBe(dispatchesAt(f, 2, 3));
      // the kernels' shares add up to the formula
      for (const key of ["fixed", "perLayerApplication", "perLayer"] as const)
        expect(Object.values(byKernel).reduce((s, k) => s + k[key], 0)).toBe(f[key]);
      if (target !== null) expect(f.perLayerApplication).toBeLessThanOrEqual(target);
      expect(f).toEqual(pinned);
    }, 600_000);

  it("a Transformer layer whose MLP takes split-K: still 25 (the partials summed by their consumers)", async () => {
    // d_ff 512 at 16 rows: gate|up's ∂x sums K = 1024 and down_proj's forward K = 512 over one
    // tile each, so both split K; the norm's backward and the residual add sum the partials
    const rows = SHAPE.batch * SHAPE.seq;
    const D = TRANSFORMER.d_model;
    expect(splitKFor(rows, D, 2 * 512)).toBeGreaterThan(1);
    expect(splitKFor(rows, D, 512)).toBeGreaterThan(1);
    const wide = { ...TRANSFORMER, mlp: { d_ff: 512 } };
    const { byKernel, ...f } = await dispatchFormula(ctx!, wide, SHAPE, o);
    console.log(`Transformer, d_ff 512: ${JSON.stringify(f)}`);
    console.log(`  by kernel: ${breakdownText({ ...f, byKernel }, "perLayerApplication")}`);
    expect(f.perLayerApplication).toBeLessThanOrEqual(25);
    expect(byKernel.gemm_splitk_sum?.perLayerApplication ?? 0).toBe(0);
    expect(f).toEqual({ fixed: 28, perLayerApplication: 25, perLayer: 18 });
  }, 600_000);

  it("at 512 rows (column sums over two row blocks, weight gradients by split-K): still 30 and 25", async () => {
    // B·T = 512: every column sum (norm weights, conv, A, D, dt bias) sums 2 blocks of 256 rows
    // and the weight gradients' GEMMs (K = 512) split K. Their partials are summed by their
    // reader: a weight's gradient once per step, whatever R (in b, not a), ∂A by −exp's backward.
    const rows = { batch: 16, seq: 32 };
    expect(splitKFor(2 * BASE.d_model, BASE.d_model, rows.batch * rows.seq)).toBeGreaterThan(1);
    for (const [name, config, target] of [
      ["Mamba-2", MAMBA, 30],
      ["Transformer", TRANSFORMER, 25],
    ] as const) {
      const { byKernel, ...f } = await dispatchFormula(ctx!, config, rows, o);
      console.log(`${name} at ${rows.batch}×${rows.seq}: ${JSON.stringify(f)}`);
      console.log(`  by kernel: ${breakdownText({ ...f, byKernel }, "perLayerApplication")}`);
      expect(f.perLayerApplication).toBeLessThanOrEqual(target);
      expect(byKernel.gemm_splitk_sum?.perLayerApplication ?? 0).toBe(0);
      expect(byKernel.gemm_splitk_sum?.perLayer ?? 0).toBeGreaterThan(0);
    }
  }, 600_000);

  it("an attention mixer's layer application: at most 25 dispatches forward + backward", async () => {
    // a hybrid whose every layer is attention: the norm, q/k/v projections, RoPE, attention,
    // o_proj and the residual add, no MLP
    const attn = (L: number, R: number) => ({
      ...BASE,
      backbone: "hybrid" as const,
      n_layers: L,
      n_loops: R,
      attn_layers: Array.from({ length: L }, (_, i) => i),
    });
    const { byKernel, ...f } = await dispatchFormula(ctx!, attn, SHAPE, o);
    console.log(`attention mixer: ${JSON.stringify(f)}`);
    console.log(`  by kernel: ${breakdownText({ ...f, byKernel }, "perLayerApplication")}`);
    expect(f.perLayerApplication).toBeLessThanOrEqual(25);
    expect(f).toEqual({ fixed: 28, perLayerApplication: 14, perLayer: 10 });
  }, 600_000);

  it("a step binding the buffers of the previous one creates no bind group", async () => {
    const counts = await stepCounters(ctx!, { ...MAMBA, n_layers: 2, n_loops: 2 }, SHAPE, o, 4);
    console.log(`bind groups created per step: ${counts.map((c) => c.bindGroupsCreated)}`);
    // The first step makes the gradients and the optimiser's moments (persistent buffers taken
    // from the pool), so the second starts with other buffers free than the first did; from the
    // third on every step starts like the one before and binds the very same buffers.
    expect(counts[0]!.bindGroupsCreated).toBeGreaterThan(0);
    expect(counts[1]!.bindGroupsCreated).toBeLessThan(counts[0]!.dispatches);
    for (const c of counts.slice(2)) {
      expect(c.dispatches).toBe(counts[1]!.dispatches);
      expect(c.bindGroupsCreated).toBe(0);
    }
  }, 600_000);

  it("a destroyed buffer takes its cached bind groups with it", async () => {
    await stepCounters(ctx!, { ...MAMBA, n_layers: 1, n_loops: 1 }, SHAPE, o, 1);
    const before = ctx!.cachedBindGroups;
    expect(before).toBeGreaterThan(0);
    ctx!.trimPool(); // every pooled buffer is free after the engine's dispose: all destroyed
    expect(ctx!.cachedBindGroups).toBeLessThan(before);
  }, 600_000);
});
