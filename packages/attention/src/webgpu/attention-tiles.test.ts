import { gpuForTests } from "@loop/test-support-gpu";
import { GpuContext } from "@loop/webgpu";
import { tileDepth } from "@loop/webgpu/kernel";
import { describe, expect, it } from "vitest";
import { create } from "webgpu";
import { compareAttention } from "./attention-oracle.test-util.js";

const shared = await gpuForTests("webgpu attention tiles");

/**
 * A device with WebGPU's default 16 KiB of workgroup memory (the shared test context asks for
 * the adapter's maximum): there head_dim 32 gets staged tiles of 61 rows, key tiles that do not
 * line up with the 64-query tiles, and the dK dV kernel stages 45 query rows (what fits beside
 * its blocks of P and dS): five 8-row blocks and a partial one.
 */
async function smallDevice(): Promise<GpuContext> {
  const gpu = create([]);
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error("no adapter");
  return new GpuContext(await adapter.requestDevice(), { keepAlive: [gpu, adapter] });
}

describe.runIf(shared)("webgpu attention with tiles shallower than 64 rows", () => {
  it("B=1 T=67 Hq=4 Hkv=2 hd=32 on 16 KiB of workgroup memory", async () => {
    const ctx = await smallDevice();
    expect(tileDepth(32, ctx.device.limits.maxComputeWorkgroupStorageSize)).toBe(61);
    await compareAttention(ctx, { B: 1, T: 67, Hq: 4, Hkv: 2, hd: 32 });
    ctx.destroy();
  });
});
