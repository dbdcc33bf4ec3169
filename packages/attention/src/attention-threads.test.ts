import { backward } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import * as poolKernel from "@loop/tensor/kernel";
import { threadCount } from "@loop/tensor/kernel";
import * as poolNode from "@loop/tensor/node";
import { useThreadPool } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { attention } from "./attention.js";

/** Output and gradients of Σ attention(q, k, v) ⊙ dy, as plain arrays. */
function run(B: number, T: number, Hq: number, Hkv: number, hd: number) {
  const q = randn([B, T, Hq, hd], 1);
  const k = randn([B, T, Hkv, hd], 2);
  const v = randn([B, T, Hkv, hd], 3);
  const dy = Float32Array.from(randn([B, T, Hq, hd], 4).data); // ordinary memory: staged
  const y = attention(q, k, v, { blockQ: 16, blockK: 24 });
  backward([y], [dy]);
  return [y.data, q.grad!, k.grad!, v.grad!].map((a) => Array.from(a));
}

describe("attention on a thread pool", () => {
  const shapes: [number, number, number, number, number][] = [
    [2, 70, 4, 2, 8],
    [3, 40, 2, 1, 16],
  ];
  // Computed while collecting the tests, before the pool starts.
  const serial = shapes.map((s) => run(...s));

  useThreadPool({ ...poolKernel, ...poolNode }, 3);

  it("gives bit-identical results to the serial run, (batch, KV head) units split across threads", () => {
    expect(threadCount()).toBe(3);
    shapes.forEach((s, i) => {
      expect(run(...s)).toEqual(serial[i]);
    });
  });
});
