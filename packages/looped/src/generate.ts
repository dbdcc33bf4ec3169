/*
 * Autoregressive generation (batch 1) under a step policy: how many loop steps each token runs.
 *   "full": every token through all R steps (`decodeStep`, model.md §1); the prompt goes in as
 *     one chunked prefill (prefill.ts), which leaves the same states as feeding it token by token;
 *   "threshold": early-exit decoding at threshold q (decode-early-exit.ts; needs an exit gate),
 *     optionally with a depth cap and, with `fullPrompt`, the prompt through all R steps; an
 *     early-exiting prompt goes in as one early-exit prefill (prefill-early-exit.ts);
 *   "fixed": every token stops at step k, the loop truncated to k steps (no gate needed);
 *   "rule": early-exit decoding under any realisable exit rule (exit-rule.ts of @loop/exit-gate:
 *     gate, confidence, entropy, state-change, agree, fixed), with the threshold's options.
 * Sampling: temperature (0 = greedy), top-k, seeded. The prefill and every decode step run on the
 * CPU kernels given (`kernels`, a backend's), else on those the kernel-set registry holds.
 */
import {
  checkExitRule,
  checkThreshold,
  type ExitRule,
  exitRuleNeeds,
  formatExitRule,
  isRealisable,
} from "@loop/exit-gate";
import { Rng, STEP_POLICY_KINDS, type Tensor } from "@loop/tensor";
import { type CpuKernels, withKernels } from "@loop/tensor/kernel";
import { decodeStep, initDecodeState, sampleToken } from "./decode.js";
import {
  addEarlyExitCounts,
  decodeStepEarlyExit,
  type EarlyExitCounts,
  type EarlyExitOptions,
  emptyEarlyExitCounts,
} from "./decode-early-exit.js";
import type { LoopedModel } from "./model.js";
import { prefill } from "./prefill.js";
import { prefillEarlyExit } from "./prefill-early-exit.js";

interface SkippingPolicy {
  /** What skipped Mamba-2 steps do with an exited token (EarlyExitOptions.skipped). */
  skipped?: EarlyExitOptions["skipped"];
  /** Run the prompt through all R steps (default false: the prompt exits early too). */
  fullPrompt?: boolean;
}

/**
 * Which loop step each generated token exits at: full depth, a threshold on the exit CDF, or a
 * fixed step.
 */
export type StepPolicy =
  | { kind: "full" }
  | ({ kind: "threshold"; q: number; maxStep?: number } & SkippingPolicy)
  | ({ kind: "fixed"; step: number } & SkippingPolicy)
  | ({ kind: "rule"; rule: ExitRule; maxStep?: number } & SkippingPolicy);

// (@loop/tensor's STEP_POLICY_KINDS, a backend's `decode.policies`, lists every StepPolicy kind:
// one missing there, or one there that is not a kind here, fails here)
const _allKinds: (typeof STEP_POLICY_KINDS)[number] = "full" as StepPolicy["kind"];
const _onlyKinds: readonly StepPolicy["kind"][] = STEP_POLICY_KINDS;
void _allKinds;
void _onlyKinds;

/**
 * Options of `generate`: how many tokens, sampling (temperature, top-k, seed), stop token, exit
 * policy and kernels.
 */
export interface GenerateOptions {
  maxNewTokens: number;
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Sample among the k most likely tokens (0 or undefined = all). */
  topK?: number;
  seed?: number;
  /** Stop when this token is produced. */
  stopToken?: number;
  /** Loop steps per token (default full depth). */
  policy?: StepPolicy;
  /** The CPU kernels to decode on (a backend's; default: the registry's). */
  kernels?: CpuKernels;
}

/** What `generate` returns: the new tokens, every token's exit step and the work done. */
export interface GenerateResult {
  /** The new token ids. */
  tokens: number[];
  /** Exit step of every token fed to the model (prompt, then generated), 1-based. */
  exitSteps: number[];
  /** Work over every token fed (a full-depth token counts R·N layers run). */
  counts: EarlyExitCounts;
}

/** The checked policy, temperature and top-k of `opts` for `model` and `prompt` (else an error). */
export function checkGenerateOptions(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
) {
  const op = "generate";
  const policy = opts.policy ?? { kind: "full" };
  if (policy.kind === "threshold") {
    checkThreshold(policy.q, op);
    if (!model.exitGate)
      throw new Error(`${op}: the model has no exit gate (config.exit_gate is false)`);
  } else if (policy.kind === "rule") {
    checkExitRule(policy.rule, model.config.n_loops, op);
    if (!isRealisable(policy.rule))
      throw new Error(
        `${op}: ${formatExitRule(policy.rule)} is not realisable (it reads the target): it runs in evaluation only`,
      );
    if (exitRuleNeeds(policy.rule).gate && !model.exitGate)
      throw new Error(`${op}: the model has no exit gate (config.exit_gate is false)`);
  } else if (policy.kind !== "full" && policy.kind !== "fixed")
    throw new Error(
      `${op}: policy.kind must be "full", "threshold", "fixed" or "rule", got ${JSON.stringify((policy as { kind: unknown }).kind)}`,
    );
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
  return { policy, temperature, topK };
}

/** The early-exit options a step policy decodes with (null: full depth). */
export function earlyExitOptionsOf(policy: StepPolicy): EarlyExitOptions | null {
  switch (policy.kind) {
    case "full":
      return null;
    case "threshold":
      return { q: policy.q, maxStep: policy.maxStep, skipped: policy.skipped };
    case "fixed":
      return { maxStep: policy.step, skipped: policy.skipped };
    case "rule":
      return { rule: policy.rule, maxStep: policy.maxStep, skipped: policy.skipped };
  }
}

/** The work of `tokens` tokens run through every loop step (`layers` = R·N per token). */
function fullDepthCounts(tokens: number, layers: number): EarlyExitCounts {
  return { ...emptyEarlyExitCounts(), tokens, layersRun: tokens * layers };
}

/** Generate up to `maxNewTokens` tokens after `prompt` under `opts.policy`, on `opts.kernels`. */
export function generate(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
): GenerateResult {
  const it = generateTokens(model, prompt, opts);
  for (;;) {
    const r = it.next();
    if (r.done) return r.value;
  }
}

/**
 * `generate`, one token at a time: each `next()` samples (and returns) the next token, on
 * `opts.kernels`; the iterator's return value is `generate`'s result. A caller can show every
 * token as it comes and stop whenever it likes, so a long generation is never held back.
 * The options are checked at the first `next()`.
 */
export function generateTokens(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
): Iterator<number, GenerateResult> {
  const it = decodeTokens(model, prompt, opts);
  return { next: () => withKernels(opts.kernels, () => it.next()) };
}

function* decodeTokens(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
): Generator<number, GenerateResult> {
  const { policy, temperature, topK } = checkGenerateOptions(model, prompt, opts);
  const R = model.config.n_loops;
  const N = model.layers.length;
  const rng = new Rng(opts.seed ?? 0);
  const st = initDecodeState(model, 1, prompt.length + opts.maxNewTokens);
  const counts = emptyEarlyExitCounts();
  const exitSteps: number[] = [];
  const early = earlyExitOptionsOf(policy);
  const fullPrompt = policy.kind === "full" || policy.fullPrompt === true;
  const feed = (t: number): Tensor => {
    if (!early) {
      exitSteps.push(R);
      addEarlyExitCounts(counts, fullDepthCounts(1, R * N));
      return decodeStep(model, st, [t], false).logits[0]!;
    }
    const res = decodeStepEarlyExit(model, st, [t], early);
    exitSteps.push(res.exitSteps[0]!);
    addEarlyExitCounts(counts, res);
    return res.logits;
  };
  // The prompt in one pass, loop step by loop step over all of it (chunked scan), leaving the
  // states that feeding it token by token would leave.
  let last: Tensor;
  if (fullPrompt || !early) {
    last = prefill(model, st, [prompt], false).logits[0]!;
    for (let t = 0; t < prompt.length; t++) exitSteps.push(R);
    addEarlyExitCounts(counts, fullDepthCounts(prompt.length, R * N));
  } else {
    const res = prefillEarlyExit(model, st, [prompt], early);
    last = res.logits;
    for (const z of res.exitSteps) exitSteps.push(z);
    addEarlyExitCounts(counts, res);
  }
  const tokens: number[] = [];
  for (let i = 0; i < opts.maxNewTokens; i++) {
    const next = sampleToken(last.data, temperature, topK, rng);
    tokens.push(next);
    yield next;
    if (next === opts.stopToken || i === opts.maxNewTokens - 1) break;
    last = feed(next);
  }
  return { tokens, exitSteps, counts };
}
