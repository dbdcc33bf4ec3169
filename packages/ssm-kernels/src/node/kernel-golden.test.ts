/**
 * The Mamba-2 kernels against the independent PyTorch reference (testdata/golden/kernels, made
 * by tools/golden): the SSD scan (sequential reference and chunked), causal conv1d, the model's
 * fused conv1d + SiLU + split, the gated RMSNorm, and the mixer's decode step and prefill from a
 * carried state — outputs, states and every input gradient, on the portable kernels and on the
 * native ones (native/ssm.c, ssd.c, mamba2-step.c; each native case asserts which native kernels
 * ran). Tolerances: docs/formats.md "Golden vectors".
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
import { causalConv1d } from "../causal-conv1d.js";
import { causalConv1dSiluSplit } from "../conv-silu-split.js";
import { gatedRmsnorm } from "../gated-rmsnorm.js";
import type { Mamba2Config } from "../mamba2-config.js";
import { Mamba2Mixer } from "../mamba2-mixer.js";
import { ssdScanChunked } from "../ssd-scan-chunked.js";
import { ssdScanRef } from "../ssd-scan-ref.js";
import { disableNativeSsmKernels, enableNativeSsmKernels } from "./index.js";

const { expectGoldenGrads, goldenLeaves } = goldenGrads(Tensor, backward);

function ssdCase(scan: "reference" | number): () => void {
  return () => {
    const c = loadKernelCase("ssd-scan");
    const names = ["x", "dt", "A", "B", "C"];
    const t = goldenLeaves(c, names);
    const args = [t.x!, t.dt!, t.A!, t.B!, t.C!] as const;
    const { y } =
      scan === "reference" ? ssdScanRef(...args) : ssdScanChunked(...args, { chunkSize: scan });
    expectGolden("y", y.data, c.get("y").data, "forward");
    expectGoldenGrads(c, y, t, names);
  };
}

function convCase(): void {
  const c = loadKernelCase("causal-conv1d");
  const names = ["x", "weight", "bias"];
  const t = goldenLeaves(c, names);
  const y = causalConv1d(t.x!, t.weight!, t.bias!);
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGoldenGrads(c, y, t, names);
}

/** The model's op: the pieces of `widths` channels, joined again along the channels. */
function joinPieces(pieces: Tensor[], rows: number): Float32Array {
  const C = pieces.reduce((s, p) => s + p.lastDim, 0);
  const out = new Float32Array(rows * C);
  let o = 0;
  for (const p of pieces) {
    const w = p.lastDim;
    for (let r = 0; r < rows; r++) out.set(p.data.subarray(r * w, (r + 1) * w), r * C + o);
    o += w;
  }
  return out;
}

function splitRows(full: Float32Array, rows: number, widths: number[]): Float32Array[] {
  const C = widths.reduce((a, b) => a + b, 0);
  let o = 0;
  return widths.map((w) => {
    const out = new Float32Array(rows * w);
    for (let r = 0; r < rows; r++) out.set(full.subarray(r * C + o, r * C + o + w), r * w);
    o += w;
    return out;
  });
}

function convSiluCase(): void {
  const c = loadKernelCase("conv1d-silu");
  const widths = c.spec.settings.widths as number[];
  const names = ["x", "weight", "bias", "initial_state"];
  const t = goldenLeaves(c, names);
  const pieces = causalConv1dSiluSplit(t.x!, t.weight!, t.bias!, t.initial_state!, widths);
  const [B, T] = c.get("x").shape as [number, number];
  expectGolden("y", joinPieces(pieces, B * T), c.get("y").data, "forward");
  backward(pieces, splitRows(c.get("dy").data, B * T, widths));
  for (const n of names) expectGolden(`grad.${n}`, t[n]!.grad!, c.get(`grad.${n}`).data, "grad");
}

function gatedCase(): void {
  const c = loadKernelCase("gated-rmsnorm");
  const names = ["x", "z", "weight"];
  const t = goldenLeaves(c, names);
  const s = c.spec.settings as { n_groups: number; eps: number };
  const y = gatedRmsnorm(t.x!, t.z!, t.weight!, s.n_groups, s.eps);
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGoldenGrads(c, y, t, names);
}

/** A mixer holding the case's weights (model.md §6 names under mixer.). */
function mixerOf(c: KernelCase): Mamba2Mixer {
  const s = c.spec.settings as {
    d_model: number;
    norm_eps: number;
    ssm: Record<string, number> & { time_step_limit?: [number, number]; norm_groups?: string };
  };
  const cfg: Mamba2Config = {
    dModel: s.d_model,
    dState: s.ssm.d_state!,
    headdim: s.ssm.headdim!,
    expand: s.ssm.expand!,
    nGroups: s.ssm.n_groups!,
    dConv: s.ssm.d_conv!,
    chunkSize: s.ssm.chunk_size!,
    normEps: s.norm_eps,
    ...(s.ssm.time_step_limit ? { dtLimit: s.ssm.time_step_limit } : {}),
    ...(s.ssm.norm_groups === "whole" ? { normGroups: 1 } : {}),
  };
  const m = new Mamba2Mixer(cfg);
  for (const p of m.parameters()) p.tensor.data.set(c.get(p.name).data);
  return m;
}

function stateOf(c: KernelCase) {
  return { conv: c.copy("conv_state"), ssm: c.copy("ssm_state"), batch: c.get("u").shape[0]! };
}

const decodeCase = (name: string) => (): void => {
  const c = loadKernelCase(name);
  const m = mixerOf(c);
  const st = stateOf(c);
  const [B, T, D] = c.get("u").shape as [number, number, number];
  const u = c.get("u").data;
  const y = new Float32Array(B * T * D);
  for (let t = 0; t < T; t++) {
    const ut = new Float32Array(B * D);
    for (let b = 0; b < B; b++) ut.set(u.subarray((b * T + t) * D, (b * T + t + 1) * D), b * D);
    const out = m.step(st, new Tensor(ut, [B, D]));
    for (let b = 0; b < B; b++) y.set(out.data.subarray(b * D, (b + 1) * D), (b * T + t) * D);
  }
  expectGolden("y", y, c.get("y").data, "forward");
  expectGolden("conv_state.out", st.conv, c.get("conv_state.out").data, "forward");
  expectGolden("ssm_state.out", st.ssm, c.get("ssm_state.out").data, "forward");
};

const prefillCase = (name: string) => (): void => {
  const c = loadKernelCase(name);
  const m = mixerOf(c);
  const u = new Tensor(c.copy("u"), [...c.get("u").shape], true);
  const st = stateOf(c);
  const y = m.prefill(st, u);
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGolden("conv_state.out", st.conv, c.get("conv_state.out").data, "forward");
  expectGolden("ssm_state.out", st.ssm, c.get("ssm_state.out").data, "forward");
  backward(y, [c.get("dy").data]);
  expectGolden("grad.u", u.grad!, c.get("grad.u").data, "grad");
  for (const p of m.parameters())
    expectGolden(`grad.${p.name}`, p.tensor.grad!, c.get(`grad.${p.name}`).data, "grad");
};

const SSD = ["ssd/backwardGroups", "ssd/backwardHeads", "ssd/forward"];

/** [name, case, the native kernels it must call when they are registered] */
const cases: [string, () => void, string[]][] = [
  ["ssd-scan, sequential reference", ssdCase("reference"), []],
  ["ssd-scan, chunked L=16", ssdCase(16), SSD],
  ["ssd-scan, chunked L=64", ssdCase(64), SSD],
  ["causal-conv1d", convCase, ["ssm/convBwd", "ssm/convFwd"]],
  ["conv1d-silu (fused conv, SiLU, split)", convSiluCase, ["ssm/convSiluBwd", "ssm/convSiluFwd"]],
  ["gated-rmsnorm", gatedCase, ["ssm/rmsnormBwd", "ssm/rmsnormFwd"]],
  ["mamba2-step (decode)", decodeCase("mamba2-step"), ["mamba2Step/step"]],
  [
    "mamba2-step-dt-limit (decode, dt clamped)",
    decodeCase("mamba2-step-dt-limit"),
    ["mamba2Step/step"],
  ],
  ...(["mamba2-prefill", "mamba2-prefill-dt-limit", "mamba2-prefill-norm-whole"] as const).map(
    (name): [string, () => void, string[]] => [
      name,
      prefillCase(name),
      [
        ...SSD,
        "ssm/convSiluBwd",
        "ssm/convSiluFwd",
        "ssm/rmsnormBwd",
        "ssm/rmsnormFwd",
        "ssm/softplusBwd",
        "ssm/softplusFwd",
      ],
    ],
  ),
];

await goldenKernelSuites(
  "SSD scan, conv1d, gated RMSNorm, decode step, prefill",
  cases,
  {
    what: "Mamba-2 kernels",
    source: "native/ssm.c, ssd.c, mamba2-step.c",
    enable: enableNativeSsmKernels,
    disable: disableNativeSsmKernels,
  },
  kernelProfile,
);
