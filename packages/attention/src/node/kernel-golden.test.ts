/**
 * The attention kernels against the independent PyTorch reference (testdata/golden/kernels, made
 * by tools/golden): causal GQA attention (the plain reference and the tiled kernel at two tile
 * sizes), RoPE, the SwiGLU gate, and the attention mixer both as the training forward (with every
 * gradient) and as KV-cache decoding (a prompt, then one token at a time) — on the portable
 * kernels and on the native ones (native/attention.c; each native case asserts which native
 * kernels ran). Tolerances: docs/formats.md "Golden vectors".
 */
import { backward, Tensor } from "@loop/tensor";
import * as kernelProfile from "@loop/tensor/node";
import {
  expectGolden,
  goldenGrads,
  goldenKernelSuites,
  type KernelCase,
  loadKernelCase,
} from "@loop/test-support";
import { expect } from "vitest";
import { attention } from "../attention.js";
import { AttentionMixer } from "../attention-mixer.js";
import { attentionRef } from "../attention-ref.js";
import { rope } from "../rope.js";
import { swiglu } from "../swiglu.js";
import { disableNativeAttentionKernels, enableNativeAttentionKernels } from "./index.js";

const { expectGoldenGrads, goldenLeaves } = goldenGrads(Tensor, backward);

function attentionCase(how: "reference" | { blockQ: number; blockK: number }): () => void {
  return () => {
    const c = loadKernelCase("attention");
    const names = ["q", "k", "v"];
    const t = goldenLeaves(c, names);
    const y =
      how === "reference" ? attentionRef(t.q!, t.k!, t.v!) : attention(t.q!, t.k!, t.v!, how);
    expectGolden("y", y.data, c.get("y").data, "forward");
    expectGoldenGrads(c, y, t, names);
  };
}

function ropeCase(): void {
  const c = loadKernelCase("rope");
  const t = goldenLeaves(c, ["x"]);
  const s = c.spec.settings as { theta: number; position_offset: number };
  const y = rope(t.x!, { theta: s.theta, offset: s.position_offset });
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGoldenGrads(c, y, t, ["x"]);
}

function swigluCase(): void {
  const c = loadKernelCase("swiglu");
  const t = goldenLeaves(c, ["gate", "up"]);
  const y = swiglu(t.gate!, t.up!);
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGoldenGrads(c, y, t, ["gate", "up"]);
}

function mixerOf(c: KernelCase): AttentionMixer {
  const s = c.spec.settings as Record<string, number>;
  const m = new AttentionMixer({
    dModel: s.d_model!,
    nHeads: s.n_heads!,
    nKvHeads: s.n_kv_heads!,
    ropeTheta: s.rope_theta!,
  });
  for (const p of m.parameters()) p.tensor.data.set(c.get(p.name).data);
  return m;
}

function mixerForwardCase(): void {
  const c = loadKernelCase("attention-decode");
  const m = mixerOf(c);
  const u = new Tensor(c.copy("u"), [...c.get("u").shape], true);
  const y = m.forward(u);
  expectGolden("y", y.data, c.get("y").data, "forward");
  backward(y, [c.get("dy").data]);
  expectGolden("grad.u", u.grad!, c.get("grad.u").data, "grad");
  for (const p of m.parameters())
    expectGolden(`grad.${p.name}`, p.tensor.grad!, c.get(`grad.${p.name}`).data, "grad");
}

/** Positions [t0, t1) of u [B,T,D]. */
function positions(u: Float32Array, B: number, T: number, D: number, t0: number, t1: number) {
  const out = new Float32Array(B * (t1 - t0) * D);
  for (let b = 0; b < B; b++)
    out.set(u.subarray((b * T + t0) * D, (b * T + t1) * D), b * (t1 - t0) * D);
  return out;
}

function mixerDecodeCase(): void {
  const c = loadKernelCase("attention-decode");
  const m = mixerOf(c);
  const [B, T, D] = c.get("u").shape as [number, number, number];
  const P = c.spec.settings.prompt as number;
  const u = c.get("u").data;
  const cache = m.initState(B, T);
  const y = new Float32Array(B * T * D);
  const put = (part: Float32Array, t0: number, n: number) => {
    for (let b = 0; b < B; b++) y.set(part.subarray(b * n * D, (b + 1) * n * D), (b * T + t0) * D);
  };
  put(m.prefill(cache, new Tensor(positions(u, B, T, D, 0, P), [B, P, D])).data, 0, P);
  for (let t = P; t < T; t++)
    put(m.step(cache, new Tensor(positions(u, B, T, D, t, t + 1), [B, D])).data, t, 1);
  expect(cache.length).toBe(T);
  expectGolden("y", y, c.get("y").data, "forward");
}

const FLASH = ["attention/flashBwd", "attention/flashFwd"];

/** [name, case, the native kernels it must call when they are registered] */
const cases: [string, () => void, string[]][] = [
  ["attention, plain reference", attentionCase("reference"), []],
  ["attention, tiled 96×96", attentionCase({ blockQ: 96, blockK: 96 }), FLASH],
  ["attention, tiled 5×4", attentionCase({ blockQ: 5, blockK: 4 }), FLASH],
  ["rope", ropeCase, ["attention/rope"]],
  ["swiglu", swigluCase, ["attention/swigluBwd", "attention/swigluFwd"]],
  [
    "attention mixer (attention-decode), training forward",
    mixerForwardCase,
    [...FLASH, "attention/rope"],
  ],
  // The one-token steps attend with appendAndAttend, a portable loop with no native twin.
  [
    "attention mixer (attention-decode), prompt then KV-cache steps (steps: portable loop)",
    mixerDecodeCase,
    ["attention/flashFwd", "attention/rope"],
  ],
];

await goldenKernelSuites(
  "attention, RoPE, SwiGLU, KV-cache decoding",
  cases,
  {
    what: "attention kernels",
    source: "native/attention.c",
    enable: enableNativeAttentionKernels,
    disable: disableNativeAttentionKernels,
  },
  kernelProfile,
);
