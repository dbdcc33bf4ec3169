/*
 * Autoregressive generation (batch 1) on any backend with decode kernels, the decoding state on
 * the backend (device-decode.ts): the CPU's `generate` (generate.ts) — the same step policies
 * (full, fixed, threshold, any realisable exit rule), the same seeded sampling on the host —
 * with each token costing one pass of R·N layer steps, whatever its position. A full-depth
 * prompt goes in as one chunked pass (device-prefill.ts); an early-exiting one token by token.
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
import { devicePrefill, stateTensors } from "./device-prefill.js";
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
    ops.releaseTransients(stateTensors(st));
    return res.logits;
  };
  const tokens: number[] = [];
  try {
    let last: Float32Array = new Float32Array(0);
    if (fullPrompt) {
      // the prompt in one chunked pass, through all R steps (device-prefill.ts)
      last = await devicePrefill(ops, dm, st, [prompt]);
      for (let i = 0; i < prompt.length; i++) exitSteps.push(R);
      addEarlyExitCounts(counts, {
        ...emptyEarlyExitCounts(),
        tokens: prompt.length,
        layersRun: prompt.length * R * N,
      });
      ops.releaseTransients(stateTensors(st));
    } else
      for (let i = 0; i < prompt.length; i++)
        last = await feed(prompt[i]!, true, i === prompt.length - 1);
    for (let i = 0; i < opts.maxNewTokens; i++) {
      const next = sampleToken(last, temperature, topK, rng);
      tokens.push(next);
      yield next;
      if (next === opts.stopToken || i === opts.maxNewTokens - 1) break;
      last = await feed(next, early !== null, true);
    }
  } finally {
    disposeDeviceDecodeState(ops, st);
    dm.dispose();
    ops.releaseTransients();
  }
  return { tokens, exitSteps, counts };
}
