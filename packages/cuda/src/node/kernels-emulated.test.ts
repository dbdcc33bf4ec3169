/**
 * The CUDA backend's kernels of the backend contract (@loop/tensor `ModelOps`) run on the host
 * emulator (the same CUDA C, each block's threads on the CPU), forward and backward, against the
 * CPU's kernels of the same meaning (@loop/tensor's `cpuTensorOps`, its `backward`): unary of
 * every kind (logsigmoid at large |x| too), binary with and without a broadcast b, affine, split and concat along
 * axis 0 and −1, ceRows with ignored and wrong targets, maskedMean (with no counted target too).
 * RoPE and attention have plain references here (the CPU's live in @loop/attention): rotate-half
 * at an offset, causal GQA with packed documents, and their gradients by the chain rule in double.
 * The gradients come through the backend's autograd (`deviceAutograd` over the context's tape):
 * the loss is Σ_k mean(out_k ⊙ W_k) over fixed random weights W_k, on both sides. That autograd
 * is checked here too: checkpointing, noGrad, frozen leaves, accumulation, deferred clipping.
 * Skipped with one printed line without a C++ compiler (a failure under CI).
 */
import {
  add,
  BINARY_KINDS,
  cpuTensorOps as cpu,
  backward as cpuBackward,
  IGNORE_INDEX,
  IntTensor,
  mean,
  mul,
  Rng,
  ropeTables,
  Tensor,
  UNARY_KINDS,
} from "@loop/tensor";
import { emulatorSuiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { cudaBackend } from "../backend-ops.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { startEmulatedDevice } from "./emulated-device.js";

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("the CUDA contract kernels on the host emulator", started);

/** A fresh backend on the emulated device (its own context and tape). */
function backend() {
  if (!started.ok) throw new Error(started.reason);
  return cudaBackend(started.device);
}
type Ops = ReturnType<typeof backend>["ops"];
/** A float input (gets a gradient) or an int one (targets, document indices). */
type Input = { shape: number[]; data: Float32Array } | { shape: number[]; ints: Int32Array };

const rng = new Rng(57);
const randn = (n: number, s = 1) => Float32Array.from({ length: n }, () => s * rng.normal());
const f = (shape: number[], s = 1): Input => ({
  shape,
  data: randn(
    shape.reduce((a, b) => a * b, 1),
    s,
  ),
});

/** |a − b| ≤ atol + rtol·|b| everywhere, NaN where b is NaN. */
function expectClose(
  what: string,
  a: Float32Array,
  b: ArrayLike<number>,
  atol = 2e-6,
  rtol = 1e-5,
) {
  expect(a.length, `${what}: length`).toBe(b.length);
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (Number.isNaN(y)) expect(x, `${what}[${i}]`).toBeNaN();
    else if (!(Math.abs(x - y) <= atol + rtol * Math.abs(y)))
      expect.fail(`${what}[${i}]: ${x} vs ${y} (|Δ| ${Math.abs(x - y)})`);
  }
}

const asList = <T>(r: T | T[]): T[] => (Array.isArray(r) ? r : [r]);

/**
 * Run `gpu` on the emulator and `cpu` on the CPU with the same inputs; compare every output, then
 * every float input's gradient of Σ_k mean(out_k ⊙ W_k).
 */
async function check(
  inputs: Input[],
  cpu: (xs: (Tensor | IntTensor)[]) => Tensor | Tensor[],
  gpu: (ops: Ops, xs: CudaTensor[]) => CudaTensor | CudaTensor[],
  tol: { atol?: number; rtol?: number } = {},
): Promise<void> {
  const { ops, release } = backend();
  try {
    const cx = inputs.map((i) =>
      "data" in i
        ? new Tensor(i.data.slice(), i.shape, true)
        : new IntTensor(i.ints.slice(), i.shape),
    );
    const gx = inputs.map((i) =>
      "data" in i
        ? ops.upload(i.data, i.shape, { requiresGrad: true })
        : ops.uploadInt(i.ints, i.shape),
    );
    const cOut = asList(cpu(cx));
    const gOut = asList(gpu(ops, gx));
    expect(gOut.length).toBe(cOut.length);
    for (const [k, o] of gOut.entries()) {
      expect(ops.shapeOf(o), `output ${k} shape`).toEqual(cOut[k]!.shape);
      expectClose(`output ${k}`, await ops.read(o), cOut[k]!.data, tol.atol, tol.rtol);
    }
    const weights = cOut.map((o) => randn(o.size));
    let cLoss: Tensor | null = null;
    let gLoss: CudaTensor | null = null;
    cOut.forEach((o, k) => {
      if (o.size === 0) return;
      const c = mean(mul(o, new Tensor(weights[k]!, o.shape)));
      cLoss = cLoss ? add(cLoss, c) : c;
      const n = o.size;
      const w = ops.upload(weights[k]!, o.shape);
      const prod = ops.reshape(ops.binary("mul", gOut[k]!, w), [n]);
      const g = ops.maskedMean(prod, ops.uploadInt(new Int32Array(n), [n]));
      gLoss = gLoss ? ops.binary("add", gLoss, g) : g;
    });
    cpuBackward(cLoss!);
    ops.backward(gLoss!, 1);
    for (const [i, x] of cx.entries()) {
      if (!(x instanceof Tensor)) continue;
      const g = await ops.readGrad(gx[i]!);
      const want = x.grad ?? new Float32Array(x.size);
      expectClose(`input ${i} gradient`, g ?? new Float32Array(x.size), want, tol.atol, tol.rtol);
    }
  } finally {
    release();
  }
}

describe.runIf(runs)("the CUDA contract kernels on the host emulator", () => {
  it.each(UNARY_KINDS)("unary %s, forward and backward", async (kind) => {
    await check(
      [f([3, 7])],
      ([x]) => cpu.unary(kind, x as Tensor),
      (ops, [x]) => ops.unary(kind, x!),
    );
  });

  it("logsigmoid is exact at large |x| (no overflow, no cancellation)", async () => {
    const data = Float32Array.of(-100, -40, -20, -1, -1e-3, 0, 1e-3, 1, 20, 40, 88, 100);
    const { ops, release } = backend();
    try {
      const x = ops.upload(data, [data.length], { requiresGrad: true });
      const y = await ops.read(ops.unary("logsigmoid", x));
      // in double: log σ(x) = −log1p(e^(−x)) for x ≥ 0, x − log1p(eˣ) below
      const exact = Array.from(data, (v) =>
        v >= 0 ? -Math.log1p(Math.exp(-v)) : v - Math.log1p(Math.exp(v)),
      );
      expectClose("logsigmoid", y, exact, 1e-44, 2e-6);
      expect(y[0]).toBe(-100);
      expect(y[11]).toBeLessThan(0); // −3.7e-44, not 0: the tail kept
      await check(
        [{ shape: [data.length], data }],
        ([t]) => cpu.unary("logsigmoid", t as Tensor),
        (o, [t]) => o.unary("logsigmoid", t!),
        { atol: 1e-12, rtol: 1e-5 },
      );
    } finally {
      release();
    }
  });

  it("relu: zero gradient at x ≤ 0", async () => {
    const data = Float32Array.of(-2, -0, 0, 1e-30, 3);
    await check(
      [{ shape: [5], data }],
      ([x]) => cpu.unary("relu", x as Tensor),
      (ops, [x]) => ops.unary("relu", x!),
    );
  });

  for (const kind of BINARY_KINDS) {
    it(`binary ${kind}: same shape, and b broadcast over the leading axes (b's gradient summed)`, async () => {
      for (const bShape of [[2, 3, 5], [3, 5], [5]]) {
        await check(
          [f([2, 3, 5]), f(bShape)],
          ([a, b]) => cpu.binary(kind, a as Tensor, b as Tensor),
          (ops, [a, b]) => ops.binary(kind, a!, b!),
        );
      }
    });
  }

  it("binary refuses a b that is not a trailing part of a", () => {
    const { ops, release } = backend();
    try {
      const a = ops.upload(new Float32Array(6), [2, 3]);
      const b = ops.upload(new Float32Array(2), [2]);
      expect(() => ops.binary("add", a, b)).toThrow(
        /^add: shapes \[2,3\] and \[2\] do not broadcast/,
      );
    } finally {
      release();
    }
  });

  it("binary into a trainable leaf b: a bias's gradient added across two uses", async () => {
    await check(
      [f([4, 3]), f([3])],
      ([a, b]) => [
        cpu.binary("add", a as Tensor, b as Tensor),
        cpu.binary("mul", a as Tensor, b as Tensor),
      ],
      (ops, [a, b]) => [ops.binary("add", a!, b!), ops.binary("mul", a!, b!)],
    );
  });

  it("affine x·s + c", async () => {
    await check(
      [f([4, 6])],
      ([x]) => cpu.affine(x as Tensor, -0.75, 2.5),
      (ops, [x]) => ops.affine(x!, -0.75, 2.5),
    );
  });

  it("split and concat along axis 0 and −1, a piece of size 0 and an unused piece too", async () => {
    await check(
      [f([5, 2, 3])],
      ([x]) => cpu.split(x as Tensor, [2, 0, 3], 0),
      (ops, [x]) => ops.split(x!, [2, 0, 3], 0),
    );
    await check(
      [f([2, 3, 7])],
      ([x]) => cpu.split(x as Tensor, [3, 4], -1),
      (ops, [x]) => ops.split(x!, [3, 4], -1),
    );
    // only the first piece reaches the loss: the others' gradient is zero
    await check(
      [f([4, 6])],
      ([x]) => cpu.split(x as Tensor, [2, 4], -1)[0]!,
      (ops, [x]) => ops.split(x!, [2, 4], -1)[0]!,
    );
    await check(
      [f([6, 2])],
      ([x]) => cpu.split(x as Tensor, [1, 5], 0)[1]!,
      (ops, [x]) => ops.split(x!, [1, 5], 0)[1]!,
    );
    await check(
      [f([2, 3, 4]), f([2, 3, 1]), f([2, 3, 2])],
      (xs) => cpu.concat(xs as Tensor[], -1),
      (ops, xs) => ops.concat(xs, -1),
    );
    await check(
      [f([1, 4]), f([3, 4]), f([2, 4])],
      (xs) => cpu.concat(xs as Tensor[], 0),
      (ops, xs) => ops.concat(xs, 0),
    );
    // the same tensor twice: its gradient is the sum of both blocks'
    await check(
      [f([2, 3])],
      ([x]) => cpu.concat([x as Tensor, x as Tensor], -1),
      (ops, [x]) => ops.concat([x!, x!], -1),
    );
  });

  it("split and concat refuse sizes and shapes that do not fit, in one line", () => {
    const { ops, release } = backend();
    try {
      const x = ops.upload(new Float32Array(12), [3, 4]);
      expect(() => ops.split(x, [1, 1], 0)).toThrow(
        /^split: sizes \[1,1\] do not sum to axis 0 of \[3,4\]$/,
      );
      expect(() => ops.split(x, [3, 2], -1)).toThrow(
        /^split: sizes \[3,2\] do not sum to axis -1 of \[3,4\]$/,
      );
      const y = ops.upload(new Float32Array(10), [2, 5]);
      expect(() => ops.concat([x, y], 0)).toThrow(/^concat: shapes differ past axis 0/);
      expect(() => ops.concat([x, y], -1)).toThrow(/^concat: leading shapes differ/);
    } finally {
      release();
    }
  });

  it("ceRows: per-token cross-entropy, 0 and no gradient at IGNORE_INDEX", async () => {
    const targets = Int32Array.of(3, IGNORE_INDEX, 0, 6, IGNORE_INDEX, 2);
    await check(
      [f([2, 3, 7], 3), { shape: [2, 3], ints: targets }],
      ([l, t]) => cpu.ceRows(l as Tensor, t as IntTensor),
      (ops, [l, t]) => ops.ceRows(l!, t!),
    );
  });

  it("ceRows gives NaN for a target outside the vocabulary rather than reading past the row", async () => {
    const { ops, release } = backend();
    try {
      const l = ops.upload(randn(8), [2, 4]);
      const y = await ops.read(ops.ceRows(l, ops.uploadInt(Int32Array.of(4, 1), [2])));
      expect(y[0]).toBeNaN();
      expect(Number.isFinite(y[1])).toBe(true);
    } finally {
      release();
    }
  });

  it("maskedMean over the counted targets", async () => {
    const targets = Int32Array.of(1, IGNORE_INDEX, 0, 4, IGNORE_INDEX, 2, 9, 0);
    await check(
      [f([2, 4]), { shape: [2, 4], ints: targets }],
      ([x, t]) => cpu.maskedMean(x as Tensor, t as IntTensor),
      (ops, [x, t]) => ops.maskedMean(x!, t!),
    );
  });

  it("maskedMean with no counted target: NaN, and a zero gradient", async () => {
    const { ops, release } = backend();
    try {
      const x = ops.upload(randn(3), [3], { requiresGrad: true });
      const t = ops.uploadInt(new Int32Array(3).fill(IGNORE_INDEX), [3]);
      const m = ops.maskedMean(x, t);
      expect((await ops.read(m))[0]).toBeNaN();
      ops.backward(m, 1);
      expect(Array.from((await ops.readGrad(x))!)).toEqual([0, 0, 0]);
    } finally {
      release();
    }
  });

  it("rope of several tensors at an offset, and its backward (the inverse rotation)", async () => {
    const { ops, release } = backend();
    try {
      const [B, T, hd] = [2, 5, 8];
      const shapes = [
        [B, T, 3, hd],
        [B, T, 1, hd],
      ];
      const data = shapes.map((s) => randn(s.reduce((a, b) => a * b, 1)));
      const xs = shapes.map((s, i) => ops.upload(data[i]!, s, { requiresGrad: true }));
      const opts = { theta: 500, offset: 7 };
      const ys = ops.rope(xs, opts);
      const gs = shapes.map((s) => randn(s.reduce((a, b) => a * b, 1)));
      let loss: CudaTensor | null = null;
      for (const [i, y] of ys.entries()) {
        expect(ops.shapeOf(y)).toEqual(shapes[i]);
        expectClose(`rope ${i}`, await ops.read(y), ropeRef(data[i]!, shapes[i]!, opts, 1));
        const n = gs[i]!.length;
        const w = ops.upload(gs[i]!, shapes[i]!);
        const term = ops.maskedMean(
          ops.reshape(ops.binary("mul", y, w), [n]),
          ops.uploadInt(new Int32Array(n), [n]),
        );
        loss = loss ? ops.binary("add", loss, term) : term;
      }
      ops.backward(loss!, 1);
      for (const [i, x] of xs.entries()) {
        const n = gs[i]!.length;
        const want = ropeRef(
          gs[i]!.map((v) => v / n),
          shapes[i]!,
          opts,
          -1,
        );
        expectClose(`rope ${i} gradient`, (await ops.readGrad(x))!, want);
      }
    } finally {
      release();
    }
  });

  it("attention: causal GQA over packed documents, forward and backward", async () => {
    const { ops, release } = backend();
    try {
      const [B, T, Hq, Hkv, hd] = [2, 6, 4, 2, 8];
      const seq = Int32Array.of(0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 0);
      for (const seqIdx of [null, seq]) {
        const q = randn(B * T * Hq * hd);
        const k = randn(B * T * Hkv * hd);
        const v = randn(B * T * Hkv * hd);
        const g = randn(B * T * Hq * hd);
        const ref = attentionRef(q, k, v, g, [B, T, Hq, Hkv, hd], seqIdx);
        const tq = ops.upload(q, [B, T, Hq, hd], { requiresGrad: true });
        const tk = ops.upload(k, [B, T, Hkv, hd], { requiresGrad: true });
        const tv = ops.upload(v, [B, T, Hkv, hd], { requiresGrad: true });
        const o = ops.attention(tq, tk, tv, {
          seqIdx: seqIdx && ops.uploadInt(seqIdx, [B * T]),
        });
        expectClose("attention", await ops.read(o), ref.o, 1e-5, 1e-4);
        const n = g.length;
        const w = ops.upload(g, [B, T, Hq, hd]);
        // the loss is mean(o ⊙ g): each gradient of the reference divided by n
        const loss = ops.maskedMean(
          ops.reshape(ops.binary("mul", o, w), [n]),
          ops.uploadInt(new Int32Array(n), [n]),
        );
        ops.backward(loss, 1);
        const scaled = (a: Float64Array) => a.map((x) => x / n);
        expectClose("attention dq", (await ops.readGrad(tq))!, scaled(ref.dq), 1e-6, 1e-4);
        expectClose("attention dk", (await ops.readGrad(tk))!, scaled(ref.dk), 1e-6, 1e-4);
        expectClose("attention dv", (await ops.readGrad(tv))!, scaled(ref.dv), 1e-6, 1e-4);
      }
    } finally {
      release();
    }
  });
});

/** mean(y ⊙ w) on the backend: a [1] loss from any y. */
function meanOf(ops: Ops, y: CudaTensor, w: Float32Array): CudaTensor {
  const n = w.length;
  const prod = ops.reshape(ops.binary("mul", y, ops.upload(w, ops.shapeOf(y))), [n]);
  return ops.maskedMean(prod, ops.uploadInt(new Int32Array(n), [n]));
}

describe.runIf(runs)("the CUDA backend's autograd (deviceAutograd over the context's tape)", () => {
  it("checkpoint gives the gradients of the plain forward, its intermediates recomputed", async () => {
    const xs = randn(4 * 6);
    const ws = randn(5 * 6, 0.5);
    const gs = randn(4 * 5);
    const grads = async (checkpointed: boolean) => {
      const { ops, release } = backend();
      try {
        const x = ops.upload(xs, [4, 6], { requiresGrad: true });
        const w = ops.upload(ws, [5, 6], { persistent: true, requiresGrad: true });
        const f = (u: CudaTensor) => ops.unary("logsigmoid", ops.linear(u, w));
        const y = checkpointed ? ops.checkpoint!(f, x, [w]) : f(x);
        ops.backward(meanOf(ops, y, gs), 1);
        return { y: await ops.read(y), gx: (await ops.readGrad(x))!, gw: (await ops.readGrad(w))! };
      } finally {
        release();
      }
    };
    const plain = await grads(false);
    const ckpt = await grads(true);
    expectClose("y", ckpt.y, plain.y, 0, 0);
    expectClose("gx", ckpt.gx, plain.gx, 0, 0);
    expectClose("gw", ckpt.gw, plain.gw, 0, 0);
  });

  it("noGrad records nothing; a frozen leaf gets no gradient; gradients add until zeroGrads", async () => {
    const { ops, release } = backend();
    try {
      const x = ops.upload(randn(6), [2, 3], { requiresGrad: true });
      const b = ops.upload(randn(3), [3], { persistent: true, requiresGrad: true });
      const g = randn(6);
      const unrecorded = ops.noGrad(() => meanOf(ops, ops.binary("mul", x, b), g));
      expect(() => ops.backward(unrecorded, 1)).toThrow(
        /^cuda backward: the loss records no gradient path$/,
      );
      ops.setTrainable(b, false);
      ops.backward(meanOf(ops, ops.binary("add", x, b), g), 1);
      expect(ops.hasGrad(b)).toBe(false);
      expect(await ops.readGrad(b)).toBeNull();
      ops.setTrainable(b, true);
      ops.backward(meanOf(ops, ops.binary("add", x, b), g), 1);
      expect(ops.hasGrad(b)).toBe(true);
      const once = (await ops.readGrad(b))!.slice();
      // b's gradient: Σ over the 2 rows of g/6
      expectClose(
        "gb",
        once,
        [0, 1, 2].map((j) => (g[j]! + g[3 + j]!) / 6),
      );
      ops.backward(meanOf(ops, ops.binary("add", x, b), g), 0.5);
      expectClose(
        "gb, accumulated",
        (await ops.readGrad(b))!,
        Array.from(once, (v) => 1.5 * v),
      );
      ops.zeroGrads([b]);
      expect(ops.hasGrad(b)).toBe(false);
    } finally {
      release();
    }
  });

  it("clipGrads is applied by AdamW as it reads the gradient, and by readGrad", async () => {
    const { ops, release } = backend();
    try {
      const w0 = randn(8);
      const w = ops.upload(w0, [8], { persistent: true, requiresGrad: true });
      const u = ops.upload(randn(8), [8], { persistent: true, requiresGrad: true });
      const gw = randn(8);
      const gu = randn(8);
      ops.backward(ops.binary("add", meanOf(ops, w, gw), meanOf(ops, u, gu)), 1);
      const norm = ops.gradNorm([w, u]);
      const want = Math.hypot(...Array.from(gw, (v) => v / 8), ...Array.from(gu, (v) => v / 8));
      expectClose("norm", await ops.read(norm), [want]);
      const maxNorm = want / 4;
      ops.clipGrads([w, u], norm, maxNorm);
      const factor = maxNorm / (want + 1e-6);
      expectClose(
        "clipped u",
        (await ops.readGrad(u))!,
        Array.from(gu, (v) => (v / 8) * factor),
      );
      const c = { decay: 0.99, stepSize: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, sc2: 1.5 };
      ops.adamw(w, ops.zeros([8]), ops.zeros([8]), c);
      const next = Array.from(w0, (v, i) => {
        const g = (gw[i]! / 8) * factor;
        const m = (1 - c.beta1) * g;
        const s = (1 - c.beta2) * g * g;
        return v * c.decay - (c.stepSize * m) / (Math.sqrt(s) * c.sc2 + c.eps);
      });
      expectClose("w after AdamW", await ops.read(w), next, 1e-6, 1e-5);
    } finally {
      release();
    }
  });
});

/** Rotate-half RoPE of x [B, T, H, hd] at offset.., by +angle (sign 1) or −angle (−1), in double. */
function ropeRef(
  x: ArrayLike<number>,
  shape: number[],
  opts: { theta: number; offset: number },
  sign: 1 | -1,
): Float64Array {
  const [B, T, H, hd] = shape as [number, number, number, number];
  const half = hd / 2;
  const { cos, sin } = ropeTables(hd, T, opts.theta, opts.offset);
  const y = new Float64Array(x.length);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let h = 0; h < H; h++) {
        const o = ((b * T + t) * H + h) * hd;
        for (let i = 0; i < half; i++) {
          const [c, s] = [cos[t * half + i]!, sign * sin[t * half + i]!];
          const [x1, x2] = [x[o + i]!, x[o + i + half]!];
          y[o + i] = x1 * c - x2 * s;
          y[o + i + half] = x2 * c + x1 * s;
        }
      }
  return y;
}

/**
 * Causal GQA attention in double, scale 1/√hd, a query seeing the keys s ≤ t of its own document,
 * and the gradients of ⟨o, g⟩ (softmax backward: ds = p·(dp − Σ p·dp)).
 */
function attentionRef(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  g: Float32Array,
  [B, T, Hq, Hkv, hd]: number[],
  seqIdx: Int32Array | null,
) {
  const o = new Float64Array(q.length);
  const dq = new Float64Array(q.length);
  const dk = new Float64Array(k.length);
  const dv = new Float64Array(v.length);
  const sc = 1 / Math.sqrt(hd!);
  const qi = (b: number, t: number, h: number) => ((b * T! + t) * Hq! + h) * hd!;
  const ki = (b: number, t: number, h: number) => ((b * T! + t) * Hkv! + h) * hd!;
  for (let b = 0; b < B!; b++)
    for (let h = 0; h < Hq!; h++) {
      const kh = Math.floor(h / (Hq! / Hkv!));
      for (let t = 0; t < T!; t++) {
        const keys: number[] = [];
        for (let s = 0; s <= t; s++)
          if (!seqIdx || seqIdx[b * T! + s] === seqIdx[b * T! + t]) keys.push(s);
        const sc2 = keys.map((s) => {
          let d = 0;
          for (let i = 0; i < hd!; i++) d += q[qi(b, t, h) + i]! * k[ki(b, s, kh) + i]!;
          return d * sc;
        });
        const m = Math.max(...sc2);
        const e = sc2.map((x) => Math.exp(x - m));
        const z = e.reduce((a, x) => a + x, 0);
        const p = e.map((x) => x / z);
        const dp = keys.map((s, j) => {
          let d = 0;
          for (let i = 0; i < hd!; i++) {
            o[qi(b, t, h) + i]! += p[j]! * v[ki(b, s, kh) + i]!;
            dv[ki(b, s, kh) + i]! += p[j]! * g[qi(b, t, h) + i]!;
            d += g[qi(b, t, h) + i]! * v[ki(b, s, kh) + i]!;
          }
          return d;
        });
        const pdp = p.reduce((a, x, j) => a + x * dp[j]!, 0);
        keys.forEach((s, j) => {
          const ds = p[j]! * (dp[j]! - pdp) * sc;
          for (let i = 0; i < hd!; i++) {
            dq[qi(b, t, h) + i]! += ds * k[ki(b, s, kh) + i]!;
            dk[ki(b, s, kh) + i]! += ds * q[qi(b, t, h) + i]!;
          }
        });
      }
    }
  return { o, dq, dk, dv };
}
