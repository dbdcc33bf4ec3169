import { backward, Rng, withScratch } from "@loop/tensor";
import * as poolKernel from "@loop/tensor/kernel";
import { threadCount } from "@loop/tensor/kernel";
import * as poolNode from "@loop/tensor/node";
import { useThreadPool } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { relErr, type ScanInputs, scanInputs } from "./helpers.test-util.js";
import { ssdScanChunked } from "./ssd-scan-chunked.js";
import { ssdScanRef } from "./ssd-scan-ref.js";

function run(chunked: boolean, inp: ScanInputs, withStateGrad: boolean) {
  const leaves = [inp.x, inp.dt, inp.A, inp.B, inp.C, ...(inp.s0 ? [inp.s0] : [])];
  for (const t of leaves) t.grad = null;
  const opts = { initialState: inp.s0, chunkSize: 8 };
  const { y, state } = chunked
    ? ssdScanChunked(inp.x, inp.dt, inp.A, inp.B, inp.C, opts)
    : ssdScanRef(inp.x, inp.dt, inp.A, inp.B, inp.C, opts);
  const rng = new Rng(5);
  const gy = rng.fillUniform(new Float32Array(y.size), -1, 1);
  if (withStateGrad) {
    backward([y, state], [gy, rng.fillUniform(new Float32Array(state.size), -1, 1)]);
  } else backward(y, [gy]);
  return [y.data, state.data, ...leaves.map((t) => Float32Array.from(t.grad!))];
}

describe("chunked scan on a thread pool", () => {
  /** Kernel names of the jobs posted to workers (the real workers still run them). */
  const posted = new Set<string>();
  useThreadPool({ ...poolKernel, ...poolNode }, 3, posted);

  for (const G of [1, 2]) {
    for (const withState of [false, true]) {
      it(`matches the sequential reference (G=${G}, initial state: ${withState})`, () => {
        expect(threadCount()).toBe(3);
        const inp = scanInputs({ batch: 3, T: 45, H: 4, P: 8, G, N: 8 }, 60 + G, withState);
        const want = run(false, inp, withState);
        const got = run(true, inp, withState);
        got.forEach((g, k) => {
          expect(relErr(g, want[k]!), `output ${k}`).toBeLessThan(1e-5);
        });
      });
    }
  }

  it("inside withScratch (pooled shared buffers, reused dirty) still matches, on the workers", () => {
    // big enough that outputs, saved tensors and gradients all come from the step pool
    const inp = scanInputs({ batch: 3, T: 45, H: 4, P: 16, G: 1, N: 16 }, 70, true);
    const want = run(false, inp, true);
    for (let rep = 0; rep < 2; rep++) {
      posted.clear();
      const got = withScratch(() => run(true, inp, true).map((a) => Float32Array.from(a)));
      got.forEach((g, k) => {
        expect(relErr(g, want[k]!), `output ${k}, pass ${rep}`).toBeLessThan(1e-5);
      });
      expect(posted.has("ssm/ssd-fwd")).toBe(true);
      expect(posted.has("ssm/ssd-bwd-head")).toBe(true);
    }
  });

  it("really hands every pass to the workers", () => {
    posted.clear();
    run(true, scanInputs({ batch: 2, T: 40, H: 4, P: 8, G: 2, N: 8 }, 90, true), true);
    for (const k of ["ssm/ssd-cb", "ssm/ssd-fwd", "ssm/ssd-bwd-head", "ssm/ssd-bwd-group"]) {
      expect(posted.has(k), k).toBe(true);
    }
  });
});
