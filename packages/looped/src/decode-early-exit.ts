/*
 * Early-exit decoding: an opt-in decode mode that skips the loop steps after a token exits
 * (research beyond docs/exit-gate.md, which runs all R steps; see docs/early-exit.md).
 * For each token and sequence b, loop steps r = 1, 2, … run as in `decodeStep` (docs/model.md §1)
 * and after each an exit rule decided online (OnlineExitRule: the gate's threshold q by default,
 * or any realisable rule of exit-rule.ts, reading the step's gate logit, logits or readout) says
 * whether row b exits at r, else it exits at R (or at the depth cap maxStep). Once row b exits at
 * step z:
 *   - steps z+1..R are not run for it (no layer, no norm, no gate);
 *   - Mamba-2 states (conv, ssm) of steps z+1..R are left unchanged for row b: the token is
 *     carried forward, as if those steps had not seen it (or, with skipped "propagate", take
 *     h(z) in through their state update, Mamba2Mixer.absorb);
 *   - attention KV caches of steps z+1..R get the entry of h(z) at the token's position
 *     (AttentionMixer.absorb, as CALM, Schuster et al. 2022, does for skipped layers), so later
 *     tokens keep one key per position;
 *   - its logits are logits(z) = head(readout(z)).
 * q = 1 never exits before R and computes exactly what `decodeStep` computes; q = 0 runs one
 * step per token. Rows exit independently; a strict subset of rows is stepped through gathered
 * states (SequenceMixer.withRows), so every row gets what batch-1 decoding would give it.
 * Shapes: ids [B] → logits [B, V], exit steps [B] (1-based).
 */
import {
  type ExitRule,
  formatExitRule,
  isRealisable,
  OnlineExitRule,
  type StepSignals,
} from "@loop/exit-gate";
import { embedding, intTensor, noGrad, type Tensor, tensor } from "@loop/tensor";
import type { DecodeState } from "./decode.js";
import { runLoop } from "./loop.js";
import type { LoopedModel } from "./model.js";

/**
 * How `decodeStepEarlyExit` picks each token's exit: threshold q on the exit CDF, a depth cap, and
 * what skipped steps leave in their states.
 */
export interface EarlyExitOptions {
  /**
   * Exit threshold q ∈ [0, 1] on the exit CDF (docs/exit-gate.md); 1 = run every step. Omitted:
   * no threshold (the gate is not consulted), every token exits at maxStep.
   */
  q?: number;
  /**
   * Any realisable exit rule in place of q (docs/exit-gate.md "Exit rules"): gate:<q> is the
   * same as q; confidence, entropy and agree compute each running row's logits at every step;
   * state-change reads its readout. The oracle (it reads the target) is refused.
   */
  rule?: ExitRule;
  /**
   * Depth cap: exit at step min(z, maxStep) (integer in [1, R], default R). With q = 1 every
   * token exits at maxStep: the loop truncated to maxStep steps, exactly logits(maxStep) of full
   * decoding, since step r's states never depend on later steps.
   */
  maxStep?: number;
  /**
   * What a skipped step's Mamba-2 states do with an exited token: "carry" (default) leaves them
   * unchanged, as if those steps never saw the token; "propagate" runs their state update on the
   * token's exit hidden state h(z) (Mamba2Mixer.absorb; about half a layer's compute).
   * Attention KV caches are filled from h(z) in both schemes.
   */
  skipped?: "carry" | "propagate";
}

/** Work counters, summed over the batch rows of one or more tokens. */
export interface EarlyExitCounts {
  /** Token × row pairs decoded. */
  tokens: number;
  /** Layer applications run: Σ_b z_b · N. */
  layersRun: number;
  /** Layer applications skipped: Σ_b (R − z_b) · N. */
  layersSkipped: number;
  /** Skipped attention layers whose KV entry was filled from h(z) (a subset of layersSkipped). */
  kvPropagated: number;
  /** Skipped Mamba-2 layers whose state took h(z) in ("propagate"; a subset of layersSkipped). */
  ssmPropagated: number;
}

/**
 * One early-exit decoding step's result: each row's logits at its exit step and the step it exited
 * at.
 */
export interface EarlyExitStepResult extends EarlyExitCounts {
  /** logits(z_b) of each row [B, V]. */
  logits: Tensor;
  /** Exit step z_b of each row, 1-based. */
  exitSteps: Int32Array;
}

/** Zero counts, to add `decodeStepEarlyExit` results to. */
export function emptyEarlyExitCounts(): EarlyExitCounts {
  return { tokens: 0, layersRun: 0, layersSkipped: 0, kvPropagated: 0, ssmPropagated: 0 };
}

/** acc += step (in place); returns acc. */
export function addEarlyExitCounts(acc: EarlyExitCounts, step: EarlyExitCounts): EarlyExitCounts {
  acc.tokens += step.tokens;
  acc.layersRun += step.layersRun;
  acc.layersSkipped += step.layersSkipped;
  acc.kvPropagated += step.kvPropagated;
  acc.ssmPropagated += step.ssmPropagated;
  return acc;
}

/** Rows `rows` (each D floats) of `src`, in that order. */
export function gatherRowData(src: Float32Array, D: number, rows: readonly number[]): Float32Array {
  const out = new Float32Array(rows.length * D);
  rows.forEach((b, j) => {
    out.set(src.subarray(b * D, (b + 1) * D), j * D);
  });
  return out;
}

/** The checked options of an early-exit call, and what they imply for the model. */
export interface EarlyExitSettings {
  /** The exit rule over `rows` token rows (q as gate:<q>), or null without q or a rule. */
  rule: OnlineExitRule | null;
  maxStep: number;
  skipped: "carry" | "propagate";
  nAttn: number;
  nSsm: number;
  /** Whether a step that every row has skipped still has work: KV entries, propagated states. */
  skippedWork: boolean;
}

/**
 * What a rule reads of row j of one step's readouts ro [n, D]: the gate logit, the logits (the
 * LM head run once over the n rows, only for rules that read them), the readout itself.
 */
export function stepSignals(
  model: LoopedModel,
  rule: OnlineExitRule | null,
  ro: Tensor,
): (j: number) => StepSignals {
  if (!rule) return () => ({});
  const D = model.config.d_model;
  const V = model.config.vocab_size;
  const gate = model.exitGate;
  const logits = rule.needs.logits ? model.head(ro).data : null;
  return (j) => {
    const s: StepSignals = {};
    if (rule.needs.gate && gate) s.gateLogit = gate.logitRow(ro.data, j);
    if (logits) s.logits = logits.subarray(j * V, (j + 1) * V);
    if (rule.needs.state) s.state = ro.data.subarray(j * D, (j + 1) * D);
    return s;
  };
}

/** Validate `opts` for `model` (errors name `op`); the rule tracks `rows` token rows. */
export function earlyExitSettings(
  model: LoopedModel,
  opts: EarlyExitOptions,
  rows: number,
  op: string,
): EarlyExitSettings {
  const R = model.config.n_loops;
  if (opts.q !== undefined && opts.rule !== undefined)
    throw new Error(`${op}: give q or rule, not both`);
  const asked: ExitRule | null =
    opts.rule ?? (opts.q === undefined ? null : { kind: "gate", q: opts.q });
  if (asked && !isRealisable(asked))
    throw new Error(
      `${op}: ${formatExitRule(asked)} is not realisable (it reads the target): it runs in evaluation only`,
    );
  const rule = asked ? new OnlineExitRule(asked, rows, R, op) : null;
  if (rule?.needs.gate && !model.exitGate)
    throw new Error(`${op}: the model has no exit gate (config.exit_gate is false)`);
  const maxStep = opts.maxStep ?? R;
  if (!Number.isInteger(maxStep) || maxStep < 1 || maxStep > R)
    throw new Error(`${op}: maxStep must be an integer in [1, ${R}], got ${maxStep}`);
  const skipped = opts.skipped ?? "carry";
  if (skipped !== "carry" && skipped !== "propagate")
    throw new Error(
      `${op}: skipped must be "carry" or "propagate", got ${JSON.stringify(skipped)}`,
    );
  // attention layers hold a positional state (a KV cache), Mamba-2 layers a recurrent one
  const nAttn = model.layers.filter((l) => l.mixer.positional).length;
  const nSsm = model.layers.length - nAttn;
  const skippedWork = nAttn > 0 || (skipped === "propagate" && nSsm > 0);
  return { rule, maxStep, skipped, nAttn, nSsm, skippedWork };
}

/** The work counters of tokens that exited at `exitSteps` (1-based), out of R steps of N layers. */
export function earlyExitCounts(
  exitSteps: Int32Array,
  R: number,
  N: number,
  s: EarlyExitSettings,
): EarlyExitCounts {
  let run = 0;
  for (const z of exitSteps) run += z;
  const skippedSteps = exitSteps.length * R - run;
  return {
    tokens: exitSteps.length,
    layersRun: run * N,
    layersSkipped: skippedSteps * N,
    kvPropagated: skippedSteps * s.nAttn,
    ssmPropagated: s.skipped === "propagate" ? skippedSteps * s.nSsm : 0,
  };
}

/** Feed one token per sequence (ids length B) with early exit at threshold q. */
export function decodeStepEarlyExit(
  model: LoopedModel,
  st: DecodeState,
  ids: ArrayLike<number>,
  opts: EarlyExitOptions,
): EarlyExitStepResult {
  const op = "decodeStepEarlyExit";
  const settings = earlyExitSettings(model, opts, st.batch, op);
  const { rule, maxStep, skipped, skippedWork } = settings;
  const B = st.batch;
  if (ids.length !== B) throw new Error(`${op}: expected ${B} token ids, got ${ids.length}`);
  if (st.position >= st.capacity)
    throw new Error(`${op}: position ${st.position} exceeds the decode capacity ${st.capacity}`);
  const { n_loops: R, d_model: D } = model.config;
  const N = model.layers.length;
  return noGrad(() => {
    const h0 = embedding(intTensor(ids, [B]), model.embeddings);
    const hAll = new Float32Array(h0.data); // row b: current h, or h(z_b) once exited
    const exitReadout = new Float32Array(B * D);
    const exitSteps = new Int32Array(B);
    let active = [...Array(B).keys()];
    let exited: number[] = [];
    let hExited: Tensor | null = null;
    runLoop(model, h0, {
      begin: () => {
        if (!active.length && !skippedWork) return false;
        exited = [...Array(B).keys()].filter((b) => exitSteps[b] !== 0);
        hExited = exited.length ? tensor(gatherRowData(hAll, D, exited), [exited.length, D]) : null;
        return true;
      },
      reads: () => active.length > 0,
      layer: (layer, h, i, r) => {
        const ls = st.states[r]![i]!;
        // The exited rows first: their entry of this step (KV always, SSM state on "propagate").
        if (hExited && (layer.mixer.positional || skipped === "propagate"))
          layer.absorb(ls, hExited, exited);
        if (active.length) h = layer.stepRows(ls, h, active, B);
        // A full-batch step moved its state on; otherwise every row now has its entry.
        if (active.length < B) layer.mixer.endPosition(ls);
        return h;
      },
      after: (h, r) => {
        const roT = model.readout(h);
        const ro = roT.data;
        const signals = stepSignals(model, rule, roT);
        const still: number[] = [];
        const keep: number[] = [];
        active.forEach((b, j) => {
          hAll.set(h.data.subarray(j * D, (j + 1) * D), b * D);
          const exit = r === maxStep - 1 || rule?.step(b, r, signals(j)) === true;
          if (exit) {
            exitSteps[b] = r + 1;
            exitReadout.set(ro.subarray(j * D, (j + 1) * D), b * D);
          } else {
            still.push(b);
            keep.push(j);
          }
        });
        const next =
          still.length && still.length < active.length
            ? tensor(gatherRowData(h.data, D, keep), [still.length, D])
            : h;
        active = still;
        return next;
      },
    });
    st.position++;
    return {
      logits: model.head(tensor(exitReadout, [B, D])),
      exitSteps,
      ...earlyExitCounts(exitSteps, R, N, settings),
    };
  });
}
