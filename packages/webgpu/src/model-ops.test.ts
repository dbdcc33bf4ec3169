/**
 * The backend contract's kernels on WebGPU (gpuModelOps' members, as the model calls them)
 * against the CPU's (@loop/tensor's `cpuTensorOps`, the reference of every kernel), forward and
 * every input gradient: each unary kind (logsigmoid and relu at their edges), each binary kind
 * with b of a's shape or a trailing part, affine, split and concat on both axes, ceRows with
 * ignored targets, maskedMean, and the fused composites against their definitions. RoPE and
 * attention have no CPU twin in this package's dependencies (their golden cases are
 * golden-attention.test.ts): here rope's pair (one dispatch each way) is held to rope of each
 * tensor, and attention over packed documents to attention of each document alone. Also the
 * member list: the kernels and nothing of the model. Dawn + SwiftShader; skipped with one
 * printed line where no adapter exists.
 */
import {
  AUTOGRAD_MEMBERS,
  BINARY_KINDS,
  cpuTensorOps as cpu,
  IGNORE_INDEX,
  type IntTensor,
  KERNEL_OPS_MEMBERS,
  type Tensor,
  UNARY_KINDS,
} from "@loop/tensor";
import { checkAgainstCpu, expectClose, gpuForTests, randomData } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { backwardGpu } from "./backward.js";
import { gpuCapabilities } from "./capabilities.js";
import { gpuBackendOps } from "./gpu-backend-ops.js";
import { type GpuTensor, gpuParameter, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { gpuModelOps } from "./model-ops.js";
import { ceInputs, targetsWithIgnored } from "./ops/cross-entropy.test-util.js";

const ctx = await gpuForTests("webgpu contract kernels");
const gpu = ctx ? gpuModelOps(ctx) : null!;

const f = (x: Tensor | IntTensor) => x as Tensor;
const ints = (x: Tensor | IntTensor) => x as IntTensor;

describe.runIf(ctx)("webgpu unary, binary and affine kernels against the CPU's", () => {
  for (const kind of UNARY_KINDS)
    it(`unary ${kind} over [-30, 30] (both tails)`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: kind.length + 40,
        inputs: [{ shape: [3, 101], range: [-30, 30] }],
        cpu: ([x]) => cpu.unary(kind, f(x!)),
        gpu: ([x]) => gpu.unary(kind, x!),
      });
    });

  it("logsigmoid at large |x| (exact: no overflow to −∞ or NaN) and relu at 0", async () => {
    const values = Float32Array.of(
      -1e4,
      -500,
      -120,
      -88,
      -30,
      -1e-3,
      0,
      1e-3,
      30,
      88,
      120,
      500,
      1e4,
    );
    for (const kind of ["logsigmoid", "relu"] as const)
      await checkAgainstCpu(ctx!, {
        seed: 3,
        inputs: [{ shape: [values.length], values }],
        cpu: ([x]) => cpu.unary(kind, f(x!)),
        gpu: ([x]) => gpu.unary(kind, x!),
        tol: { atol: 1e-7, rtol: 1e-6 },
      });
    const y = await gpu.unary("logsigmoid", uploadTensor(ctx!, values, [values.length])).read();
    expect(y[0]).toBe(-1e4);
    expect(y[12]).toBeLessThanOrEqual(0);
    releaseTransients(ctx!);
  });

  for (const kind of BINARY_KINDS)
    for (const bShape of [[2, 3, 5], [3, 5], [5]])
      it(`binary ${kind}: a [2,3,5], b [${bShape}]`, async () => {
        await checkAgainstCpu(ctx!, {
          seed: kind.length * 10 + bShape.length,
          inputs: [
            { shape: [2, 3, 5], name: "a" },
            { shape: bShape, name: "b" },
          ],
          cpu: ([a, b]) => cpu.binary(kind, f(a!), f(b!)),
          gpu: ([a, b]) => gpu.binary(kind, a!, b!),
        });
      });

  it("binary with an operand that needs no gradient", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 5,
      inputs: [{ shape: [4, 6] }, { shape: [6], grad: false }],
      cpu: ([a, b]) => cpu.binary("mul", f(a!), f(b!)),
      gpu: ([a, b]) => gpu.binary("mul", a!, b!),
    });
  });

  it("binary refuses b outside a's trailing shape and unknown kinds, by name", () => {
    const a = uploadTensor(ctx!, new Float32Array(30), [2, 3, 5]);
    const b = (shape: number[]) =>
      uploadTensor(ctx!, new Float32Array(shape.reduce((p, d) => p * d, 1)), shape);
    expect(() => gpu.binary("add", a, b([1, 5]))).toThrow(
      /b \[1,5\] must be a's shape \[2,3,5\] or a trailing part of it/,
    );
    expect(() => gpu.binary("sub", a, b([2, 3, 5, 1]))).toThrow(/trailing part/);
    expect(() => gpu.binary("mul", b([5]), a)).toThrow(/trailing part/);
    expect(() => gpu.binary("div" as "add", a, a)).toThrow(/unknown kind "div"/);
    expect(() => gpu.unary("log" as "exp", a)).toThrow(/unknown kind "log"/);
    releaseTransients(ctx!);
  });

  it("affine x·s + c", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 6,
      inputs: [{ shape: [4, 7] }],
      cpu: ([x]) => cpu.affine(f(x!), -1.5, 0.25),
      gpu: ([x]) => gpu.affine(x!, -1.5, 0.25),
    });
  });
});

describe.runIf(ctx)("webgpu split and concat on both axes against the CPU's", () => {
  for (const [axis, shape, sizes] of [
    [-1, [2, 3, 7], [2, 0, 5]],
    [0, [5, 2, 3], [1, 0, 4]],
  ] as const) {
    it(`split axis ${axis} of [${shape}] into [${sizes}]`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: 7,
        inputs: [{ shape }],
        cpu: ([x]) => cpu.split(f(x!), sizes, axis),
        gpu: ([x]) => gpu.split(x!, sizes, axis),
      });
    });
    it(`split axis ${axis} with a piece whose output is unused (its gradient zeros)`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: 8,
        inputs: [{ shape }],
        cpu: ([x]) => cpu.split(f(x!), sizes, axis).slice(0, 1),
        gpu: ([x]) => gpu.split(x!, sizes, axis).slice(0, 1),
      });
    });
  }

  it("concat axis -1 (one input without gradient)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 9,
      inputs: [{ shape: [2, 3] }, { shape: [2, 4], grad: false }, { shape: [2, 1] }],
      cpu: (xs) => cpu.concat(xs.map(f), -1),
      gpu: (xs) => gpu.concat(xs, -1),
    });
  });

  it("concat axis 0 (one input without gradient)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 10,
      inputs: [{ shape: [1, 3, 2] }, { shape: [2, 3, 2], grad: false }, { shape: [3, 3, 2] }],
      cpu: (xs) => cpu.concat(xs.map(f), 0),
      gpu: (xs) => gpu.concat(xs, 0),
    });
  });

  it("names bad sizes, shapes and axes", () => {
    const x = uploadTensor(ctx!, new Float32Array(12), [3, 4]);
    const y = uploadTensor(ctx!, new Float32Array(10), [2, 5]);
    expect(() => gpu.split(x, [1, 1], 0)).toThrow(/sizes \[1,1\] do not sum to axis 0 of \[3,4\]/);
    expect(() => gpu.split(x, [3, 2], -1)).toThrow(/widths \[3,2\] do not sum to last axis 4/);
    expect(() => gpu.concat([x, y], 0)).toThrow(/shapes differ past axis 0: \[3,4\] vs \[2,5\]/);
    expect(() => gpu.concat([x, y], -1)).toThrow(/leading shapes differ/);
    expect(() => gpu.split(x, [3], 1 as 0)).toThrow(/axis must be 0 or -1, got 1/);
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu ceRows and maskedMean against the CPU's", () => {
  for (const [B, T, V] of [
    [2, 5, 17],
    [1, 3, 260],
  ] as const)
    it(`ceRows with ignored targets, logits [${B},${T},${V}]`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: V,
        inputs: ceInputs(B, T, V),
        cpu: ([x, t]) => cpu.ceRows(f(x!), ints(t!)),
        gpu: ([x, t]) => gpu.ceRows(x!, t!),
      });
    });

  it("maskedMean of x [12] over targets [3,4] with ignored positions", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 11,
      inputs: [{ shape: [12] }, { shape: [3, 4], ints: targetsWithIgnored(12, 5) }],
      cpu: ([x, t]) => cpu.maskedMean(f(x!), ints(t!)),
      gpu: ([x, t]) => gpu.maskedMean(x!, t!),
    });
  });

  it("maskedMean over 700 positions (more than one thread's share, fixed order)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 12,
      inputs: [{ shape: [700] }, { shape: [700], ints: targetsWithIgnored(700, 9) }],
      cpu: ([x, t]) => cpu.maskedMean(f(x!), ints(t!)),
      gpu: ([x, t]) => gpu.maskedMean(x!, t!),
    });
  });

  it("maskedMean is NaN with a zero gradient when every target is ignored; names bad input", async () => {
    const x = gpuParameter(ctx!, Float32Array.of(1, 2, 3), [3]);
    const t = uploadTensor(ctx!, Int32Array.of(IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX), [3]);
    const m = gpu.maskedMean(x, t);
    expect(Number.isNaN((await m.read())[0])).toBe(true);
    backwardGpu(m, uploadTensor(ctx!, Float32Array.of(1), [1]));
    expect(await x.grad!.read()).toEqual(new Float32Array(3));
    expect(() => gpu.maskedMean(x, uploadTensor(ctx!, new Int32Array(4), [4]))).toThrow(
      /3 values for 4 targets/,
    );
    expect(() => gpu.maskedMean(x, x)).toThrow(/targets must be an i32 tensor/);
    x.dispose();
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu fused composites against their definitions on the CPU", () => {
  it("linearSplit(x, w, widths) = split(linear(x, w), widths, -1)", async () => {
    const widths = [3, 0, 6, 2];
    await checkAgainstCpu(ctx!, {
      seed: 13,
      inputs: [{ shape: [2, 3, 8] }, { shape: [11, 8] }],
      cpu: ([x, w]) => cpu.split(cpu.linear(f(x!), f(w!)), widths, -1),
      gpu: ([x, w]) => gpu.linearSplit!(x!, w!, widths),
    });
  });

  it("linears(x, ws) = linear(x, w) for each w", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 14,
      inputs: [{ shape: [5, 8] }, { shape: [8, 8] }, { shape: [4, 8] }, { shape: [4, 8] }],
      cpu: ([x, ...ws]) => ws.map((w) => cpu.linear(f(x!), f(w))),
      gpu: ([x, ...ws]) => gpu.linears!(x!, ws),
    });
  });
});

/** Leaves of `data` on the GPU (trainable) for each of `shapes`. */
function leaves(shapes: number[][], seed: number): GpuTensor[] {
  return shapes.map((s, i) => gpuParameter(ctx!, randomData(s, seed + i), s));
}

/** The values and the gradients of `ins` after backpropagating `seed` from `out`. */
async function valuesAndGrads(out: GpuTensor, seed: GpuTensor, ins: readonly GpuTensor[]) {
  const y = await out.read();
  backwardGpu(out, seed);
  const grads = await Promise.all(ins.map((t) => t.grad!.read()));
  return { y, grads };
}

describe.runIf(ctx)("webgpu rope and attention kernels", () => {
  it("rope of q and k together equals rope of each, by one dispatch each way", async () => {
    const [B, T, hd] = [2, 5, 8];
    const opts = { theta: 500, offset: 3 };
    const shapes = [
      [B, T, 4, hd],
      [B, T, 2, hd],
    ];
    const seeds = shapes.map((s, i) => uploadTensor(ctx!, randomData(s, 30 + i), s));
    const root = (outs: GpuTensor[]) =>
      gpu.concat(
        outs.map((o) => gpu.reshape(o, [o.size])),
        0,
      );
    const seed = gpu.concat(
      seeds.map((s) => gpu.reshape(s, [s.size])),
      0,
    );
    const single = leaves(shapes, 20);
    const want = await valuesAndGrads(
      root(single.map((x) => gpu.rope([x], opts)[0]!)),
      seed,
      single,
    );
    const pair = leaves(shapes, 20);
    const before = ctx!.counters().byKernel;
    const out = gpu.rope(pair, opts);
    const mid = ctx!.counters().byKernel;
    const got = await valuesAndGrads(root(out), seed, pair);
    const after = ctx!.counters().byKernel;
    const rotations = (a: Record<string, number>, b: Record<string, number>) =>
      Object.keys(b)
        .filter((k) => k.startsWith("rope"))
        .reduce((s, k) => s + b[k]! - (a[k] ?? 0), 0);
    expect(rotations(before, mid), "forward dispatches").toBe(1);
    expect(rotations(mid, after), "backward dispatches").toBe(1);
    await expectClose(got.y, want.y, "rope pair", 0);
    for (let i = 0; i < 2; i++) await expectClose(got.grads[i]!, want.grads[i]!, `∂x${i}`, 0);
    // three tensors: each rotated alone
    const three = leaves([shapes[0]!, shapes[1]!, shapes[0]!], 20);
    const y3 = gpu.rope(three, opts);
    for (let i = 0; i < 3; i++)
      await expectClose(y3[i]!, await gpu.rope([three[i]!], opts)[0]!.read(), `rope of 3, ${i}`, 0);
    for (const t of [...single, ...pair, ...three]) t.dispose();
    releaseTransients(ctx!);
  });

  it("attention over packed documents (seqIdx) equals attention of each document alone", async () => {
    const [T, Hq, Hkv, hd] = [7, 4, 2, 8];
    const docs = [3, 4];
    const shapes = [
      [1, T, Hq, hd],
      [1, T, Hkv, hd],
      [1, T, Hkv, hd],
    ];
    const seqIdx = gpu.uploadInt(Int32Array.of(0, 0, 0, 1, 1, 1, 1), [1, T]);
    const seed = uploadTensor(ctx!, randomData([1, T, Hq, hd], 50), [1, T, Hq, hd]);
    const packed = leaves(shapes, 40);
    const [q, k, v] = packed as [GpuTensor, GpuTensor, GpuTensor];
    const got = await valuesAndGrads(gpu.attention(q, k, v, { seqIdx }), seed, packed);
    // each document alone: cut along T (as [T, H, hd] on axis 0), attend, join back
    const alone = leaves(shapes, 40);
    const pieces = alone.map((x) =>
      gpu
        .split(gpu.reshape(x, x.shape.slice(1)), docs, 0)
        .map((p) => gpu.reshape(p, [1, ...p.shape])),
    );
    const ys = docs.map((_, d) =>
      gpu.attention(pieces[0]![d]!, pieces[1]![d]!, pieces[2]![d]!, {}),
    );
    const y = gpu.reshape(
      gpu.concat(
        ys.map((t) => gpu.reshape(t, t.shape.slice(1))),
        0,
      ),
      [1, T, Hq, hd],
    );
    const want = await valuesAndGrads(y, seed, alone);
    await expectClose(got.y, want.y, "attention, packed", 1e-5);
    for (let i = 0; i < 3; i++)
      await expectClose(got.grads[i]!, want.grads[i]!, `∂${"qkv"[i]}`, 1e-5);
    for (const t of [...packed, ...alone]) t.dispose();
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu backend members", () => {
  it("are the contract's kernels (ModelOps, TrainOps, DecodeOps) and autograd, nothing of the model", () => {
    const ops = gpuBackendOps(ctx!) as unknown as Record<string, unknown>;
    const autograd: readonly string[] = AUTOGRAD_MEMBERS;
    for (const k of autograd) expect(typeof ops[k], k).toBe("function");
    const kernels = Object.keys(ops)
      .filter((k) => !autograd.includes(k))
      .sort();
    // every required kernel, and of the optional ones: the fused composites, the hint, the
    // training step's device switches and both decode kernels
    const optional = ["linears", "linearSplit", "done", "guardFinite", "flush", "scaleGrads"];
    expect(kernels).toEqual(
      [...KERNEL_OPS_MEMBERS, ...optional, "mamba2Step", "attendStep"].sort(),
    );
    // the fused composites it registers, as its capabilities report them
    expect(gpuCapabilities(ctx!, ops).fused).toEqual(["linears", "linearSplit"]);
  });
});
