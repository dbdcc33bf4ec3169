/** Helpers shared by this package's decoding tests (not exported from the package). */
import type { DecodeState } from "./decode.js";

/*
 * Tolerance: prefill runs Mamba-2 layers through the chunked SSD scan and decodeStep through the
 * one-token recurrence; both are float32 and sum the same terms in a different order (and the
 * projections multiply [B·T, D] instead of [B, D] matrices), so results differ by rounding:
 * ~1e-7 relative per op, compounded through R·N layers and the carried states (the largest
 * difference seen here is 2e-6 of the largest magnitude). 1e-5 leaves room for another thread
 * count or kernel set and stays far below a real error (a wrong position, a dropped conv tap or
 * a state not carried moves these values by 1e-2 and more).
 */
export const TOL = 1e-5;

/** max |got − want| / max |want|; Infinity when the lengths differ. */
export function relErr(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Number.POSITIVE_INFINITY;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    scale = Math.max(scale, Math.abs(want[i]!));
  }
  return diff / Math.max(scale, 1e-30);
}

/** Deterministic token ids < 11: B sequences of length T. */
export function tokens(B: number, T: number, salt = 0): number[][] {
  return Array.from({ length: B }, (_, b) =>
    Array.from({ length: T }, (_, t) => (5 * b + 3 * t + 7 * salt + ((t * t) % 4)) % 11),
  );
}

/**
 * The largest relative difference between two decode states over every (loop step, layer) state
 * (conv, ssm; keys, values) and where it is; Infinity where positions, cache lengths or kinds
 * differ.
 */
export function stateDiff(got: DecodeState, want: DecodeState): { err: number; at: string } {
  let worst = {
    err: got.position === want.position ? 0 : Number.POSITIVE_INFINITY,
    at: "position",
  };
  const see = (err: number, at: string) => {
    if (!(err <= worst.err)) worst = { err, at };
  };
  got.states.forEach((layers, r) => {
    layers.forEach((g, i) => {
      const w = want.states[r]![i]!;
      const at = `step ${r + 1}, layer ${i}`;
      if (g.kind === "mamba" && w.kind === "mamba") {
        see(relErr(g.state.conv, w.state.conv), `${at} conv`);
        see(relErr(g.state.ssm, w.state.ssm), `${at} ssm`);
      } else if (g.kind === "attention" && w.kind === "attention") {
        see(g.cache.length === w.cache.length ? 0 : Number.POSITIVE_INFINITY, `${at} length`);
        see(relErr(g.cache.k, w.cache.k), `${at} k`);
        see(relErr(g.cache.v, w.cache.v), `${at} v`);
      } else see(Number.POSITIVE_INFINITY, `${at} kind`);
    });
  });
  return worst;
}
