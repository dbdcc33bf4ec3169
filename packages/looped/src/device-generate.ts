/*
 * Autoregressive generation (batch 1) on any backend with decode kernels, the decoding state on
 * the backend (device-decode.ts): the CPU's `generate` (generate.ts) — the same step policies
 * (full, fixed, threshold, any realisable exit rule), the same seeded sampling on the host —
 * with each token costing one pass of R·N layer steps, whatever its position. The prompt goes
 * in token by token (every prompt token's state is the one a chunked prefill leaves); only the
 * last prompt token runs the head.
 */
import { Rng } from "@loop/tensor";
import { sampleToken } from "./decode.js";
import {
  addEarlyExitCounts,
  earlyExitCounts,
  earlyExitSettings,
  emptyEarlyExitCounts,
} from "./decode-early-exit.js";
import {
  type DecodeBackendOps,
  deviceDecodeToken,
  disposeDeviceDecodeState,
  initDeviceDecodeState,
} from "./device-decode.js";
import { toDevice } from "./device-model.js";
import {
  checkGenerateOptions,
  earlyExitOptionsOf,
  type GenerateOptions,
  type GenerateResult,
} from "./generate.js";
import type { LoopedModel } from "./model.js";

/**
 * `generate` on `ops` (a backend's model ops with its decode kernels), one token at a time: each
 * `next()` samples and returns the next token; the iterator's return value is `generate`'s
 * result. The model's weights are uploaded at the first `next()` and released at the end (or at
 * `return()`).
 */
export async function* generateOn<T, I>(
  ops: DecodeBackendOps<T, I>,
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
): AsyncGenerator<number, GenerateResult> {
  const { policy, temperature, topK } = checkGenerateOptions(model, prompt, opts);
  const { n_loops: R } = model.config;
  const N = model.layers.length;
  const rng = new Rng(opts.seed ?? 0);
  const early = earlyExitOptionsOf(policy);
  const settings = early ? earlyExitSettings(model, early, 1, "generate") : null;
  const fullPrompt = !early || (policy.kind !== "full" && policy.fullPrompt === true);
  const dm = toDevice(model, ops);
  const st = initDeviceDecodeState(ops, dm, 1, prompt.length + opts.maxNewTokens);
  const counts = emptyEarlyExitCounts();
  const exitSteps: number[] = [];
  const feed = async (t: number, exitsEarly: boolean, logits: boolean) => {
    const s = exitsEarly ? settings : null;
    const res = await deviceDecodeToken(ops, dm, st, [t], s, logits);
    const z = res.exitSteps[0]!;
    exitSteps.push(z);
    addEarlyExitCounts(
      counts,
      s
        ? earlyExitCounts(res.exitSteps, R, N, s)
        : { ...emptyEarlyExitCounts(), tokens: 1, layersRun: R * N },
    );
    ops.releaseTransients();
    return res.logits;
  };
  const tokens: number[] = [];
  try {
    let last: Float32Array = new Float32Array(0);
    for (let i = 0; i < prompt.length; i++) {
      const isLast = i === prompt.length - 1;
      last = await feed(prompt[i]!, !fullPrompt, isLast);
    }
    for (let i = 0; i < opts.maxNewTokens; i++) {
      const next = sampleToken(last, temperature, topK, rng);
      tokens.push(next);
      yield next;
      if (next === opts.stopToken || i === opts.maxNewTokens - 1) break;
      last = await feed(next, early !== null, true);
    }
  } finally {
    ops.releaseTransients();
    disposeDeviceDecodeState(ops, st);
    dm.dispose();
  }
  return { tokens, exitSteps, counts };
}
