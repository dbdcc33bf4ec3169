import type { Tensor } from "@loop/tensor";
import { checkAgainstCpu, gpuForTests, type OracleInput, randomData } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { ssdScanChunked } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { ssdScanChunked as ssdCpu } from "../index.js";

const ctx = await gpuForTests("webgpu ssdScanChunked");

interface Case {
  batch: number;
  T: number;
  H: number;
  P: number;
  G: number;
  N: number;
  chunk: number;
  s0: boolean;
  D: boolean;
  /** Document starts per row (seqIdx built from them), or null. */
  starts: number[][] | null;
}

const cases: Case[] = [
  // T not a multiple of the chunk, several heads per group
  { batch: 2, T: 10, H: 4, P: 3, G: 2, N: 5, chunk: 4, s0: false, D: true, starts: null },
  { batch: 2, T: 10, H: 4, P: 3, G: 2, N: 5, chunk: 4, s0: true, D: false, starts: null },
  // documents: a start inside a chunk, one on a chunk boundary, one at t = 1
  {
    batch: 2,
    T: 11,
    H: 2,
    P: 4,
    G: 1,
    N: 3,
    chunk: 4,
    s0: true,
    D: true,
    starts: [
      [3, 8],
      [1, 4],
    ],
  },
  { batch: 1, T: 1, H: 3, P: 2, G: 3, N: 4, chunk: 64, s0: true, D: true, starts: null },
  // chunks of several 16-row tiles; P and N over one tile
  { batch: 1, T: 45, H: 2, P: 18, G: 1, N: 17, chunk: 20, s0: true, D: true, starts: [[7, 33]] },
  // the prefix sums: chunks of 3 (segments of 4 threads) spread over several workgroups of 256
  // threads, the last chunk one position long
  { batch: 2, T: 100, H: 4, P: 2, G: 2, N: 3, chunk: 3, s0: false, D: false, starts: [[50], [2]] },
  // a chunk of 200 positions: one segment fills a whole workgroup; the last chunk is 100 long
  { batch: 1, T: 300, H: 2, P: 2, G: 1, N: 2, chunk: 200, s0: true, D: false, starts: null },
];

function seqIdxOf(c: Case): Int32Array | null {
  if (!c.starts) return null;
  const s = new Int32Array(c.batch * c.T);
  for (let b = 0; b < c.batch; b++) {
    let doc = 0;
    for (let t = 0; t < c.T; t++) {
      if (c.starts[b]!.includes(t)) doc++;
      s[b * c.T + t] = doc;
    }
  }
  return s;
}

describe.runIf(ctx)("webgpu ssdScanChunked", () => {
  it.each(cases.map((c, i) => ({ ...c, i })))(
    "matches the CPU op, final state and every gradient (case $i: T=$T chunk=$chunk H=$H G=$G s0=$s0 seq=$starts)",
    async (c) => {
      const { batch, T, H, P, G, N, i } = c;
      const inputs: OracleInput[] = [
        { name: "x", values: randomData([batch, T, H, P], 10 * i + 1), shape: [batch, T, H, P] },
        {
          name: "dt",
          values: randomData([batch, T, H], 10 * i + 2, 0.01, 0.5),
          shape: [batch, T, H],
        },
        { name: "A", values: randomData([H], 10 * i + 3, -3, -0.2), shape: [H] },
        { name: "B", values: randomData([batch, T, G, N], 10 * i + 4), shape: [batch, T, G, N] },
        { name: "C", values: randomData([batch, T, G, N], 10 * i + 5), shape: [batch, T, G, N] },
      ];
      if (c.s0)
        inputs.push({
          name: "initialState",
          values: randomData([batch, H, P, N], 10 * i + 6),
          shape: [batch, H, P, N],
        });
      if (c.D) inputs.push({ name: "D", values: randomData([H], 10 * i + 7), shape: [H] });
      const seqCpu = seqIdxOf(c);
      const seqGpu = seqCpu ? uploadTensor(ctx!, seqCpu, [batch * T]) : null;
      const pick = <T>(ts: T[]) => ({
        initialState: c.s0 ? ts[5]! : null,
        D: c.D ? ts[ts.length - 1]! : null,
      });
      await checkAgainstCpu(ctx!, {
        inputs,
        cpu: (ts: Tensor[]) => {
          const r = ssdCpu(ts[0]!, ts[1]!, ts[2]!, ts[3]!, ts[4]!, {
            chunkSize: c.chunk,
            seqIdx: seqCpu,
            ...pick(ts),
          });
          return [r.y, r.state];
        },
        gpu: (ts) => {
          const r = ssdScanChunked(ts[0]!, ts[1]!, ts[2]!, ts[3]!, ts[4]!, {
            chunkSize: c.chunk,
            seqIdx: seqGpu,
            ...pick(ts),
          });
          return [r.y, r.state];
        },
        seed: 10 * i + 9,
        // float32 chunk sums and exp(Λ_i − Λ_j) of float32 cumulative sums against the CPU's
        // float64 decay products: sums of up to T·N terms
        tol: 3e-4,
      });
      releaseTransients(ctx!);
    },
  );

  it("names the problem on bad input", () => {
    const x = uploadTensor(ctx!, new Float32Array(2 * 3 * 2 * 2), [2, 3, 2, 2]);
    const dt = uploadTensor(ctx!, new Float32Array(12), [2, 3, 2]);
    const A = uploadTensor(ctx!, new Float32Array(3), [3]);
    const B = uploadTensor(ctx!, new Float32Array(2 * 3 * 1 * 2), [2, 3, 1, 2]);
    expect(() => ssdScanChunked(x, dt, A, B, B)).toThrow(
      /ssdScanChunked: A must have shape \[2\], got \[3\]/,
    );
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu ssdScanChunked without a final-state gradient", () => {
  const dims = { batch: 1, T: 9, H: 2, P: 3, G: 1, N: 4 };
  const { batch, T, H, P, G, N } = dims;
  const inputs: OracleInput[] = [
    { name: "x", values: randomData([batch, T, H, P], 91), shape: [batch, T, H, P] },
    { name: "dt", values: randomData([batch, T, H], 92, 0.01, 0.5), shape: [batch, T, H] },
    { name: "A", values: randomData([H], 93, -3, -0.2), shape: [H] },
    { name: "B", values: randomData([batch, T, G, N], 94), shape: [batch, T, G, N] },
    { name: "C", values: randomData([batch, T, G, N], 95), shape: [batch, T, G, N] },
  ];

  it("matches the CPU op when only y is used (the training forward)", async () => {
    await checkAgainstCpu(ctx!, {
      inputs,
      cpu: (ts: Tensor[]) => [ssdCpu(ts[0]!, ts[1]!, ts[2]!, ts[3]!, ts[4]!, { chunkSize: 4 }).y],
      gpu: (ts) => [ssdScanChunked(ts[0]!, ts[1]!, ts[2]!, ts[3]!, ts[4]!, { chunkSize: 4 }).y],
      seed: 99,
      tol: 3e-4,
    });
    releaseTransients(ctx!);
  });

  it("gives the same bits on every run", async () => {
    const run = async () => {
      const ts = inputs.map((i) => uploadTensor(ctx!, i.values!, i.shape));
      const r = ssdScanChunked(ts[0]!, ts[1]!, ts[2]!, ts[3]!, ts[4]!, { chunkSize: 4 });
      const out = [...(await r.y.read()), ...(await r.state.read())];
      releaseTransients(ctx!);
      return out;
    };
    expect(await run()).toEqual(await run());
  });
});
