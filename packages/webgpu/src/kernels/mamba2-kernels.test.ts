import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import type { Kernel } from "../kernel-def.js";
import * as columnSum from "./column-sum.js";
import * as conv from "./conv-silu-split.js";
import * as rms from "./gated-rmsnorm.js";
import * as ops from "./mamba2-ops.js";
import * as step from "./mamba2-step.js";
import * as ssd from "./ssd-chunked.js";
import * as ssdBackward from "./ssd-chunked-backward.js";

const ctx = await gpuForTests("webgpu Mamba-2 kernels");

const kernels = [columnSum, conv, rms, ops, step, ssd, ssdBackward].flatMap((m) =>
  Object.values(m).filter((k): k is Kernel => typeof k === "object" && k !== null && "code" in k),
);

// A WGSL error only reaches the device's uncaptured-error handler and the dispatch is dropped
// (outputs keep stale pool contents): name the kernel and the line here instead.
describe.runIf(ctx)("webgpu Mamba-2 kernels", () => {
  it("compile without WGSL errors or warnings", async () => {
    expect(kernels.length).toBeGreaterThan(15);
    const problems: string[] = [];
    for (const k of kernels) {
      const info = await ctx!.device.createShaderModule({ code: k.code }).getCompilationInfo();
      for (const m of info.messages)
        problems.push(`${k.name}:${m.lineNum} ${m.type}: ${m.message}`);
    }
    expect(problems).toEqual([]);
  });
});
