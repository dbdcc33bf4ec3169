/**
 * Child-process script for threads-process.test.ts: starts a 2-thread pool, runs one large
 * GEMM, prints {name, err} as JSON and returns WITHOUT stopping the pool: the process must
 * still exit (workers are unref'd). Run with --no-expose-wasm it exercises the JS fallback.
 */

import { gemmName } from "../kernels/gemm.js";
import { gemmMaxError, gemmTolerance } from "../kernels/gemm-check.test-util.js";
import { gemmParallel } from "../kernels/gemm-parallel.js";
import { startThreadPool } from "./threads.js";

await startThreadPool(2);
const c = { M: 200, N: 96, K: 64, transA: false, transB: true, alpha: 1, beta: 0.5, shared: true };
const err = gemmMaxError(gemmParallel, c);
console.log(JSON.stringify({ name: gemmName(), ok: err < gemmTolerance(c.K) }));
