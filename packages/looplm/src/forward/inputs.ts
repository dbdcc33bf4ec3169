/*
 * `inputs.json` of docs/formats.md: {"tokens": [[int]] B×T, "targets": [[int]] B×T (−100 = ignore),
 * "beta", "k", "gamma": numbers, "q": [numbers]}. Every malformed input is one clear error.
 */
import { IGNORE_INDEX, type IntTensor, intTensor } from "@loop/tensor";

export interface ForwardInputs {
  tokens: IntTensor;
  targets: IntTensor;
  beta: number;
  k: number;
  gamma: number;
  q: number[];
}

/** docs/exit-gate.md defaults, used only when inputs.json leaves a value out. */
export const GATE_DEFAULTS = { beta: 0.05, k: 50, gamma: 0.005 } as const;

function matrix(
  v: unknown,
  key: string,
  vocab: number,
  allowIgnore: boolean,
): { flat: number[]; B: number; T: number } {
  if (!Array.isArray(v))
    throw new Error(`inputs: "${key}" must be an array of rows (B×T), got ${typeof v}`);
  if (v.length === 0) throw new Error(`inputs: "${key}" has no rows (B = 0)`);
  const flat: number[] = [];
  let T = -1;
  v.forEach((row, b) => {
    if (!Array.isArray(row)) throw new Error(`inputs: "${key}"[${b}] must be an array of integers`);
    if (row.length === 0) throw new Error(`inputs: "${key}"[${b}] is empty (T = 0)`);
    if (T >= 0 && row.length !== T)
      throw new Error(
        `inputs: "${key}" is ragged: row 0 has ${T} entries, row ${b} has ${row.length}`,
      );
    T = row.length;
    row.forEach((x, t) => {
      const ok =
        Number.isInteger(x) && ((x >= 0 && x < vocab) || (allowIgnore && x === IGNORE_INDEX));
      if (!ok) {
        throw new Error(
          `inputs: "${key}"[${b}][${t}] = ${JSON.stringify(x)} is not a token id in [0, ${vocab})${allowIgnore ? ` or ${IGNORE_INDEX}` : ""}`,
        );
      }
      flat.push(x);
    });
  });
  return { flat, B: v.length, T };
}

function num(o: Record<string, unknown>, key: string, def: number): number {
  const v = o[key];
  if (v === undefined) return def;
  if (typeof v !== "number" || !Number.isFinite(v))
    throw new Error(`inputs: "${key}" must be a number, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The `looplm forward` inputs file (JSON `tokens` and `targets`, [B][T] ids below `vocab`, targets
 * may be −100) as tensors; errors name the field.
 */
export function parseForwardInputs(raw: unknown, vocab: number): ForwardInputs {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new Error("inputs: expected a JSON object with tokens and targets");
  const o = raw as Record<string, unknown>;
  if (o.tokens === undefined) throw new Error('inputs: missing "tokens"');
  const tok = matrix(o.tokens, "tokens", vocab, false);
  if (o.targets === undefined) throw new Error('inputs: missing "targets"');
  const tg = matrix(o.targets, "targets", vocab, true);
  if (tg.B !== tok.B || tg.T !== tok.T)
    throw new Error(`inputs: "targets" is ${tg.B}×${tg.T} but "tokens" is ${tok.B}×${tok.T}`);
  let q: number[] = [];
  if (o.q !== undefined) {
    if (!Array.isArray(o.q))
      throw new Error(
        `inputs: "q" must be an array of thresholds in [0, 1], got ${JSON.stringify(o.q)}`,
      );
    q = o.q.map((x, i) => {
      if (typeof x !== "number" || !(x >= 0 && x <= 1))
        throw new Error(`inputs: "q"[${i}] must be a number in [0, 1], got ${JSON.stringify(x)}`);
      return x;
    });
  }
  return {
    tokens: intTensor(tok.flat, [tok.B, tok.T]),
    targets: intTensor(tg.flat, [tg.B, tg.T]),
    beta: num(o, "beta", GATE_DEFAULTS.beta),
    k: num(o, "k", GATE_DEFAULTS.k),
    gamma: num(o, "gamma", GATE_DEFAULTS.gamma),
    q,
  };
}
