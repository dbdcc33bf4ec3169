/**
 * Test kernels for the pool tests (a module of its own: workers import it by URL).
 *   fill:  out[i] = 2i + 1 for i in [lo, hi); owner[i] = the thread id that wrote it.
 *   fail:  throws on every part that does not start at 0 (i.e. on the workers).
 */
import { threadId } from "node:worker_threads";
import { defineKernel } from "../threads/registry.js";

export const fillKernel = defineKernel<{ out: Int32Array; owner: Int32Array }>(
  "test/fill",
  import.meta.url,
  ({ out, owner }, lo, hi) => {
    for (let i = lo; i < hi; i++) {
      out[i] = 2 * i + 1;
      owner[i] = threadId;
    }
  },
);

export const failKernel = defineKernel<{ n: number }>("test/fail", import.meta.url, (_, lo) => {
  if (lo > 0) throw new Error(`fixture failure at ${lo}`);
});
