/**
 * Autoregressive generation (batch 1) with early-exit decoding (decode-early-exit.ts): every
 * token is fed through `decodeStepEarlyExit` at threshold q, or, with `fullPrompt`, the prompt
 * through every loop step (`decodeStep`) and only the generated tokens with early exit.
 * Sampling as `generate` (temperature, top-k, seeded).
 */
import { checkThreshold } from "@loop/exit-gate";
import { Rng, type Tensor } from "@loop/tensor";
import { decodeStep, type GenerateOptions, initDecodeState, sampleToken } from "./decode.js";
import {
  addEarlyExitCounts,
  decodeStepEarlyExit,
  type EarlyExitCounts,
  type EarlyExitOptions,
  emptyEarlyExitCounts,
} from "./decode-early-exit.js";
import type { LoopedModel } from "./model.js";

export interface GenerateEarlyExitOptions extends GenerateOptions, EarlyExitOptions {
  /** Run the prompt through all R steps (default false: the prompt exits early too). */
  fullPrompt?: boolean;
}

export interface GenerateEarlyExitResult {
  /** The new token ids. */
  tokens: number[];
  /** Exit step of every token fed to the model (prompt, then generated), 1-based. */
  exitSteps: number[];
  /** Work over every token fed (a full-prompt token counts R·N layers run). */
  counts: EarlyExitCounts;
}

function checkOptions(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateEarlyExitOptions,
) {
  const op = "generateEarlyExit";
  checkThreshold(opts.q, op);
  if (!model.exitGate)
    throw new Error(`${op}: the model has no exit gate (config.exit_gate is false)`);
  if (prompt.length === 0) throw new Error(`${op}: prompt must contain at least one token`);
  if (!Number.isInteger(opts.maxNewTokens) || opts.maxNewTokens < 0)
    throw new Error(`${op}: maxNewTokens must be an integer ≥ 0, got ${opts.maxNewTokens}`);
  const V = model.config.vocab_size;
  for (const t of prompt)
    if (!Number.isInteger(t) || t < 0 || t >= V)
      throw new Error(`${op}: prompt token ${t} is outside [0, ${V})`);
  const temperature = opts.temperature ?? 1;
  const topK = opts.topK ?? 0;
  if (!(temperature >= 0)) throw new Error(`${op}: temperature must be ≥ 0, got ${temperature}`);
  if (!Number.isInteger(topK) || topK < 0)
    throw new Error(`${op}: topK must be an integer ≥ 0, got ${topK}`);
  return { temperature, topK };
}

export function generateEarlyExit(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateEarlyExitOptions,
): GenerateEarlyExitResult {
  const { temperature, topK } = checkOptions(model, prompt, opts);
  const R = model.config.n_loops;
  const N = model.layers.length;
  const rng = new Rng(opts.seed ?? 0);
  const st = initDecodeState(model, 1, prompt.length + opts.maxNewTokens);
  const counts = emptyEarlyExitCounts();
  const exitSteps: number[] = [];
  const feed = (t: number, full: boolean): Tensor => {
    if (full) {
      exitSteps.push(R);
      addEarlyExitCounts(counts, {
        tokens: 1,
        layersRun: R * N,
        layersSkipped: 0,
        kvPropagated: 0,
        ssmPropagated: 0,
      });
      return decodeStep(model, st, [t], false).logits[0]!;
    }
    const res = decodeStepEarlyExit(model, st, [t], {
      q: opts.q,
      maxStep: opts.maxStep,
      skipped: opts.skipped,
    });
    exitSteps.push(res.exitSteps[0]!);
    addEarlyExitCounts(counts, res);
    return res.logits;
  };
  let last: Tensor | null = null;
  for (const t of prompt) last = feed(t, opts.fullPrompt === true);
  const tokens: number[] = [];
  for (let i = 0; i < opts.maxNewTokens; i++) {
    const next = sampleToken(last!.data, temperature, topK, rng);
    tokens.push(next);
    if (next === opts.stopToken || i === opts.maxNewTokens - 1) break;
    last = feed(next, false);
  }
  return { tokens, exitSteps, counts };
}
