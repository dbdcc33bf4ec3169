/*
 * Exit rules: which loop step a token exits at, decided online from what steps 1..r of that token
 * give (docs/exit-gate.md "Exit rules"). With logits ℓ(r) ∈ ℝ^V, p(r) = softmax(ℓ(r)), readout
 * s(r) ∈ ℝ^D (the state the head and the gate read: norm_f(h(r)), h(r) itself with loop_norm)
 * and the gate's CDF(r), the token exits at the first step r < R where
 *   fixed:<k>          r = k (k ∈ 1..R; never later)
 *   gate:<q>           CDF(r) ≥ q                                 (threshold-exit.ts)
 *   confidence:<τ>     max_v p(r)_v ≥ τ                            (CALM's softmax confidence)
 *   entropy:<τ>        −Σ_v p(r)_v ln p(r)_v ≤ τ  (nats)
 *   state-change:<ε>   r ≥ 2 and ‖s(r) − s(r−1)‖ / ‖s(r)‖ < ε        (Ouro's hidden-state rule)
 *   agree:<k>          r ≥ k + 1 and argmax ℓ(r) = argmax ℓ(r−1) = … = argmax ℓ(r−k)
 *   oracle             argmax ℓ(r) = target  (reads the target: evaluation only, not realisable)
 * and at R otherwise. A rule reads only steps ≤ r of its own token, so it runs while decoding (the
 * steps after the exit are skipped) and a later token's state is exactly what decoding gives it.
 * Sums over V and D are float64; argmax takes the first maximum. Steps are 1-based.
 */
import {
  checkThreshold,
  logOneMinusSigmoid,
  logSurvivalBound,
  type PdfLike,
  thresholdExit,
} from "./threshold-exit.js";

/** One exit rule (see the header for each kind's test). */
export type ExitRule =
  | { kind: "fixed"; step: number }
  | { kind: "gate"; q: number }
  | { kind: "confidence"; tau: number }
  | { kind: "entropy"; tau: number }
  | { kind: "state-change"; eps: number }
  | { kind: "agree"; k: number }
  | { kind: "oracle" };

/** The rule kinds, as `--exit` spells them. */
export const EXIT_RULE_KINDS = [
  "fixed",
  "gate",
  "confidence",
  "entropy",
  "state-change",
  "agree",
  "oracle",
] as const;

/** A rule's kind: "fixed", "gate", "confidence", "entropy", "state-change", "agree", "oracle". */
export type ExitRuleKind = (typeof EXIT_RULE_KINDS)[number];

const SYNTAX =
  "fixed:<r> | gate:<q> | confidence:<τ> | entropy:<τ> | state-change:<ε> | agree:<k> | oracle";

/** What a rule reads at each step. */
export interface ExitRuleNeeds {
  /** The exit gate's logit a(r) (the model needs a gate). */
  gate: boolean;
  /** The step's logits ℓ(r). */
  logits: boolean;
  /** The step's readout s(r). */
  state: boolean;
  /** The token's target (only the oracle: not realisable). */
  target: boolean;
}

/** What `rule` reads at each step. */
export function exitRuleNeeds(rule: ExitRule): ExitRuleNeeds {
  const k = rule.kind;
  return {
    gate: k === "gate",
    logits: k === "confidence" || k === "entropy" || k === "agree" || k === "oracle",
    state: k === "state-change",
    target: k === "oracle",
  };
}

/** Whether a rule can run without the answer (false only for the oracle). */
export function isRealisable(rule: ExitRule): boolean {
  return rule.kind !== "oracle";
}

/** A rule as `--exit` spells it (parseExitRule's inverse), e.g. "gate:0.3". */
export function formatExitRule(rule: ExitRule): string {
  switch (rule.kind) {
    case "fixed":
      return `fixed:${rule.step}`;
    case "gate":
      return `gate:${num(rule.q)}`;
    case "confidence":
    case "entropy":
      return `${rule.kind}:${num(rule.tau)}`;
    case "state-change":
      return `state-change:${num(rule.eps)}`;
    case "agree":
      return `agree:${rule.k}`;
    case "oracle":
      return "oracle";
  }
}

function num(x: number): string {
  return String(Number(x.toPrecision(6)));
}

/**
 * Parse one rule ("entropy:0.5"); errors are one line naming the text and the expected syntax.
 * `R`, when given, bounds fixed:<r> to 1..R and agree:<k> to 1..R−1.
 */
export function parseExitRule(text: string, R?: number): ExitRule {
  const s = text.trim();
  const bad = (why: string) => new Error(`exit rule "${text}": ${why} (expected ${SYNTAX})`);
  const colon = s.indexOf(":");
  const kind = colon < 0 ? s : s.slice(0, colon);
  const arg = colon < 0 ? null : s.slice(colon + 1).trim();
  if (!(EXIT_RULE_KINDS as readonly string[]).includes(kind)) throw bad(`unknown rule "${kind}"`);
  if (kind === "oracle") {
    if (arg !== null) throw bad("oracle takes no value");
    return { kind: "oracle" };
  }
  if (arg === null || arg === "") throw bad(`${kind} needs a value`);
  const x = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(arg) ? Number(arg) : Number.NaN;
  if (!Number.isFinite(x)) throw bad(`"${arg}" is not a number`);
  const integer = (lo: number, hi: number | undefined, what: string) => {
    if (!Number.isInteger(x) || x < lo || (hi !== undefined && x > hi))
      throw bad(
        `${what} must be an integer ≥ ${lo}${hi === undefined ? "" : ` and ≤ ${hi}`}, got ${arg}`,
      );
    return x;
  };
  switch (kind as ExitRuleKind) {
    case "fixed":
      return { kind: "fixed", step: integer(1, R, "the step") };
    case "agree":
      return { kind: "agree", k: integer(1, R === undefined ? undefined : R - 1, "k") };
    case "gate":
      if (!(x >= 0 && x <= 1)) throw bad(`q must be in [0, 1], got ${arg}`);
      return { kind: "gate", q: x };
    case "confidence":
      if (!(x >= 0 && x <= 1)) throw bad(`τ must be a probability in [0, 1], got ${arg}`);
      return { kind: "confidence", tau: x };
    case "entropy":
      if (!(x >= 0)) throw bad(`τ must be ≥ 0 nats, got ${arg}`);
      return { kind: "entropy", tau: x };
    default:
      if (!(x >= 0)) throw bad(`ε must be ≥ 0, got ${arg}`);
      return { kind: "state-change", eps: x };
  }
}

/** Parse a comma-separated list of rules (parseExitRule for each). */
export function parseExitRules(text: string, R?: number): ExitRule[] {
  const parts = text.split(",").filter((p) => p.trim() !== "");
  if (parts.length === 0) throw new Error(`exit rules "${text}": none given (expected ${SYNTAX})`);
  return parts.map((p) => parseExitRule(p, R));
}

/** Check `rule` against a model of R loop steps (errors name `op`). */
export function checkExitRule(rule: ExitRule, R: number, op: string): void {
  const fail = (why: string) => new Error(`${op}: ${formatExitRule(rule)}: ${why}`);
  if (rule.kind === "fixed" && !(Number.isInteger(rule.step) && rule.step >= 1 && rule.step <= R))
    throw fail(`the step must be an integer in [1, ${R}]`);
  if (rule.kind === "agree" && !(Number.isInteger(rule.k) && rule.k >= 1))
    throw fail("k must be an integer ≥ 1");
  if (rule.kind === "gate") checkThreshold(rule.q, op);
  if (
    (rule.kind === "confidence" && !(rule.tau >= 0 && rule.tau <= 1)) ||
    (rule.kind === "entropy" && !(rule.tau >= 0)) ||
    (rule.kind === "state-change" && !(rule.eps >= 0))
  )
    throw fail("the threshold is out of range");
}

/** What one token row gives a rule at one step (each only where the rule needs it). */
export interface StepSignals {
  /** The gate's logit a(r). */
  gateLogit?: number;
  /** ℓ(r) of the row (V values). */
  logits?: ArrayLike<number>;
  /** s(r) of the row (D values). */
  state?: ArrayLike<number>;
  /** The row's target id (oracle). */
  target?: number;
}

/** Index of the first maximum of `x`. */
export function argmaxRow(x: ArrayLike<number>): number {
  let best = 0;
  for (let v = 1; v < x.length; v++) if (x[v]! > x[best]!) best = v;
  return best;
}

/** max_v softmax(ℓ)_v and the softmax entropy (nats), float64. */
export function softmaxStats(logits: ArrayLike<number>): { maxProb: number; entropy: number } {
  let m = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < logits.length; v++) if (logits[v]! > m) m = logits[v]!;
  // Z = Σ e^{ℓ−m};  H = ln Z − Σ e^{ℓ−m}(ℓ−m) / Z;  max p = 1 / Z
  let z = 0;
  let zl = 0;
  for (let v = 0; v < logits.length; v++) {
    const d = logits[v]! - m;
    const e = Math.exp(d);
    z += e;
    zl += e * d;
  }
  return { maxProb: 1 / z, entropy: Math.log(z) - zl / z };
}

/** ‖a − b‖ / ‖a‖ (float64); Infinity when a = 0 and a ≠ b, 0 when both are 0. */
export function relativeChange(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d2 = 0;
  let a2 = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    d2 += d * d;
    a2 += a[i]! * a[i]!;
  }
  if (d2 === 0) return 0;
  return Math.sqrt(d2) / Math.sqrt(a2);
}

/**
 * A rule decided online for `rows` independent token rows: feed each row its steps r = 0, 1, …
 * (0-based) in order; `step` says whether the row exits there. Step R − 1 always exits.
 */
export class OnlineExitRule {
  /** What the rule reads at each step (the caller computes only that). */
  readonly needs: ExitRuleNeeds;
  private readonly bound: number;
  private readonly logS: Float64Array;
  private readonly lastArgmax: Int32Array;
  private readonly run: Int32Array;
  private prev: Float64Array[] | null = null;

  constructor(
    readonly rule: ExitRule,
    readonly rows: number,
    readonly R: number,
    op = "exitRule",
  ) {
    checkExitRule(rule, R, op);
    this.needs = exitRuleNeeds(rule);
    this.bound = rule.kind === "gate" ? logSurvivalBound(rule.q, op) : 0;
    this.logS = new Float64Array(rule.kind === "gate" ? rows : 0);
    this.lastArgmax = new Int32Array(rule.kind === "agree" ? rows : 0).fill(-1);
    this.run = new Int32Array(rule.kind === "agree" ? rows : 0);
    if (rule.kind === "state-change") this.prev = new Array(rows);
  }

  /** Row b's signals at step r (0-based); true: it exits at r + 1. */
  step(b: number, r: number, s: StepSignals): boolean {
    if (r >= this.R - 1) return true;
    const need = <T>(x: T | undefined, what: string): T => {
      if (x === undefined)
        throw new Error(`exit rule ${formatExitRule(this.rule)}: step ${r + 1} has no ${what}`);
      return x;
    };
    const rule = this.rule;
    switch (rule.kind) {
      case "fixed":
        return r + 1 >= rule.step;
      case "gate":
        this.logS[b]! += logOneMinusSigmoid(need(s.gateLogit, "gate logit"));
        return this.logS[b]! <= this.bound;
      case "confidence":
        return softmaxStats(need(s.logits, "logits")).maxProb >= rule.tau;
      case "entropy":
        return softmaxStats(need(s.logits, "logits")).entropy <= rule.tau;
      case "agree": {
        const a = argmaxRow(need(s.logits, "logits"));
        this.run[b] = a === this.lastArgmax[b] ? this.run[b]! + 1 : 0;
        this.lastArgmax[b] = a;
        return this.run[b]! >= rule.k;
      }
      case "oracle":
        return argmaxRow(need(s.logits, "logits")) === need(s.target, "target");
      case "state-change": {
        const st = need(s.state, "state");
        const prev = this.prev![b];
        this.prev![b] = Float64Array.from(st);
        return prev !== undefined && relativeChange(st, prev) < rule.eps;
      }
    }
  }
}

/** Per-step data of M token rows, as a whole-sequence evaluation holds it. */
export interface RuleStepData {
  /** ℓ(r) [M, V] for r = 1..R (needed by confidence, entropy, agree, oracle). */
  logits?: readonly ArrayLike<number>[];
  /** s(r) [M, D] for r = 1..R (state-change). */
  states?: readonly ArrayLike<number>[];
  /** The gate's logits a [R, M] (gate). */
  gateLogits?: ArrayLike<number>;
  /**
   * The exit pdf p [R, M] (gate): when given, gate:<q> is `thresholdExit` on its CDF, as the
   * gate's evaluation has always been decided (the online form agrees up to float rounding).
   */
  pdf?: PdfLike;
  /** Target id of each row [M] (oracle). */
  targets?: ArrayLike<number>;
}

/**
 * Exit step (1-based) of each of M rows under `rule`, over R steps: the online rule fed each
 * row's steps in order, so it equals what decoding decides.
 */
export function ruleExitSteps(
  rule: ExitRule,
  data: RuleStepData,
  M: number,
  R: number,
): Int32Array {
  const online = new OnlineExitRule(rule, M, R, "ruleExitSteps");
  if (rule.kind === "gate" && data.pdf) return thresholdExit(data.pdf, rule.q).data;
  const z = new Int32Array(M);
  const V = data.logits?.[0] ? data.logits[0].length / M : 0;
  const D = data.states?.[0] ? data.states[0].length / M : 0;
  const row = (x: ArrayLike<number>, m: number, n: number) =>
    x instanceof Float32Array || x instanceof Float64Array
      ? x.subarray(m * n, (m + 1) * n)
      : Array.prototype.slice.call(x, m * n, (m + 1) * n);
  for (let m = 0; m < M; m++) {
    for (let r = 0; r < R; r++) {
      const s: StepSignals = {};
      if (online.needs.gate && data.gateLogits) s.gateLogit = data.gateLogits[r * M + m];
      if (online.needs.logits && data.logits) s.logits = row(data.logits[r]!, m, V);
      if (online.needs.state && data.states) s.state = row(data.states[r]!, m, D);
      if (online.needs.target && data.targets) s.target = data.targets[m];
      if (online.step(m, r, s)) {
        z[m] = r + 1;
        break;
      }
    }
  }
  return z;
}
