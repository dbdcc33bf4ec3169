/*
 * Mano expressions (docs/tasks.md "Mano"): values mod 23, operators + − × (ASCII "+", "-", "*"),
 * a random binary tree with ℓ internal nodes written in prefix notation.
 *
 * Tree shape: the left subtree gets k operators with k uniform in 0..ℓ−1, the right one ℓ−1−k,
 * recursively. Draw order per internal node (fixed, part of the determinism contract):
 * operator (uniform over 3), then k; a leaf draws its value uniform over 0..22.
 */
import type { Rng } from "@loop/tensor";

/** Mano's modulus: every value is taken mod 23. */
export const MANO_MODULUS = 23;
/** Mano's operators. */
export const MANO_OPERATORS = ["+", "-", "*"] as const;
/** One Mano operator: "+", "-" or "*". */
export type ManoOperator = (typeof MANO_OPERATORS)[number];

function apply(op: string, a: number, b: number): number {
  switch (op) {
    case "+":
      return (a + b) % MANO_MODULUS;
    case "-":
      return (a - b + MANO_MODULUS) % MANO_MODULUS;
    case "*":
      return (a * b) % MANO_MODULUS;
    default:
      throw new Error(`Mano: unknown operator "${op}"`);
  }
}

/** Append a random expression with `ops` operators to `out` (prefix order); returns its value. */
export function sampleExpression(rng: Rng, ops: number, out: string[]): number {
  if (ops === 0) {
    const v = rng.int(MANO_MODULUS);
    out.push(String(v));
    return v;
  }
  const op = MANO_OPERATORS[rng.int(3)]!;
  const left = rng.int(ops);
  out.push(op);
  const a = sampleExpression(rng, left, out);
  const b = sampleExpression(rng, ops - 1 - left, out);
  return apply(op, a, b);
}

/** Evaluate a prefix expression over the Mano symbols; throws on a malformed expression. */
export function evaluatePrefix(tokens: readonly string[]): number {
  let i = 0;
  const walk = (): number => {
    const t = tokens[i++];
    if (t === undefined) throw new Error("Mano: expression ended early");
    if ((MANO_OPERATORS as readonly string[]).includes(t)) {
      const a = walk();
      const b = walk();
      return apply(t, a, b);
    }
    const v = Number(t);
    if (!/^\d+$/.test(t) || v >= MANO_MODULUS) throw new Error(`Mano: bad token "${t}"`);
    return v;
  };
  const v = walk();
  if (i !== tokens.length)
    throw new Error(`Mano: ${tokens.length - i} tokens after the expression`);
  return v;
}
