/**
 * The tape's gradient targets (tape.ts `gradTarget`, backward.ts): ops write a leaf's gradient
 * straight into its persistent buffer (overwritten at the first use, added to at the later ones)
 * and an intermediate's gradient into the running sum the tape holds, when no other pending
 * gradient shares that buffer. Graphs where a weight serves several ops, where an intermediate
 * feeds several consumers, and where add's backward hands one gradient to two inputs (a shared
 * buffer that must not be added to in place), against the CPU autograd; the pool is poisoned,
 * so a sum that starts from stale contents shows. Each graph runs twice: keeping everything to
 * the end of the walk, and freeing activations and gradients as the walk consumes them (the
 * training default), where a buffer freed while a gradient target still used it would show.
 */
import {
  add,
  linear as cpuLinear,
  linearSplit as cpuLinearSplit,
  rmsnorm as cpuRmsnorm,
  exp,
  neg,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, it } from "vitest";
import { add as gpuAdd } from "./ops/binary.js";
import { linearSplit } from "./ops/linear-split.js";
import { linear } from "./ops/matmul.js";
import { rmsnorm } from "./ops/rmsnorm.js";
import { exp as gpuExp, neg as gpuNeg } from "./ops/unary.js";

const ctx = await gpuForTests("webgpu gradient targets");

describe.runIf(ctx)("webgpu backward: gradients written into their destinations", () => {
  for (const release of [false, true]) {
    const how = release ? " (freed as consumed)" : "";
    it(`a weight used by several ops, an input feeding several consumers${how}`, async () => {
      // x [3,4,6]: u = rmsnorm(x, nw); a = u·wᵀ; b = rmsnorm(a, nw)·wᵀ (w, nw used twice; u by
      // one linear, a by rmsnorm and the sum); out = a + b + (−exp(al))·1 broadcast-free (al [6])
      await checkAgainstCpu(ctx!, {
        release,
        seed: 3,
        inputs: [{ shape: [3, 4, 6] }, { shape: [6] }, { shape: [6, 6] }, { shape: [6] }],
        cpu: ([x, nw, w, al]) => {
          const u = cpuRmsnorm(x as Tensor, nw as Tensor);
          const a = cpuLinear(u, w as Tensor);
          const b = cpuLinear(cpuRmsnorm(a, nw as Tensor), w as Tensor);
          const e = neg(exp(al as Tensor));
          return [add(a, b), add(e, exp(al as Tensor))];
        },
        gpu: ([x, nw, w, al]) => {
          const u = rmsnorm(x!, nw!);
          const a = linear(u, w!);
          const b = linear(rmsnorm(a, nw!), w!);
          const e = gpuNeg(gpuExp(al!));
          return [gpuAdd(a, b), gpuAdd(e, gpuExp(al!))];
        },
      });
    });

    it(`a sum of three linears of one input (the running sum added to in place)${how}`, async () => {
      await checkAgainstCpu(ctx!, {
        release,
        seed: 4,
        inputs: [{ shape: [5, 8] }, { shape: [8, 8] }, { shape: [8, 8] }, { shape: [8, 8] }],
        cpu: ([x, w1, w2, w3]) => {
          const h = cpuLinear(x as Tensor, w1 as Tensor);
          const y = add(
            add(cpuLinear(h, w1 as Tensor), cpuLinear(h, w2 as Tensor)),
            cpuLinear(h, w3 as Tensor),
          );
          // add hands one gradient (made during the walk: it comes from the last linear) to y and
          // to h; adding into it in place for h would corrupt y's
          return cpuLinear(add(y, h), w2 as Tensor);
        },
        gpu: ([x, w1, w2, w3]) => {
          const h = linear(x!, w1!);
          const y = gpuAdd(gpuAdd(linear(h, w1!), linear(h, w2!)), linear(h, w3!));
          return linear(gpuAdd(y, h), w2!);
        },
      });
    });

    it(`linearSplit's pieces and a weight used by it twice${how}`, async () => {
      await checkAgainstCpu(ctx!, {
        release,
        seed: 5,
        inputs: [{ shape: [2, 3, 4] }, { shape: [9, 4] }, { shape: [4, 5] }],
        cpu: ([x, w, v]) => {
          const [p, q] = cpuLinearSplit(x as Tensor, w as Tensor, [4, 5]) as [Tensor, Tensor];
          const [r] = cpuLinearSplit(p, w as Tensor, [9]) as [Tensor];
          return [q, r, cpuLinear(q, v as Tensor)];
        },
        gpu: ([x, w, v]) => {
          const [p, q] = linearSplit(x!, w!, [4, 5]);
          const [r] = linearSplit(p!, w!, [9]);
          return [q!, r!, linear(q!, v!)];
        },
      });
    });
  }
});
