/*
 * The op cases' tolerances: the suites' default, and the bound at each reduced GEMM precision.
 */
import type { Tolerance } from "./case-types.js";

/** The suites' default: rtol 1e-4, atol 5e-6. */
export const DEFAULT_TOL: Tolerance = { atol: 5e-6, rtol: 1e-4 };
/**
 * Under mixed precision each GEMM rounds its operands to f16 (relative error up to 2⁻¹¹ ≈ 4.9e-4
 * each): a sum of K terms of size O(1) is then off by up to ~K·1e-3 in the worst case and
 * ~√K·1e-3 typically, whatever its own size, so the bound needs an absolute floor: 2e-2 for the
 * sums here (K ≤ 96; measured worst 6e-3 on SwiftShader), and 1e-2 relative.
 */
export const MIXED_TOL: Tolerance = { atol: 2e-2, rtol: 1e-2 };

/**
 * The GEMM-bearing cases' (`precision: "any"`) tolerance at each reduced GEMM precision a backend
 * offers: webgpu's mixed (f16 operands) and cuda's tf32 and bf16 (tensor-core operands). tf32
 * keeps f16's 10 mantissa bits, so f16's bound; bf16 keeps 7 (a rounding error up to 2⁻⁸ ≈ 3.9e-3
 * per operand, 8× f16's): 8× the bound.
 */
export const REDUCED_PRECISION_TOL = {
  mixed: MIXED_TOL,
  tf32: MIXED_TOL,
  bf16: { atol: 1.6e-1, rtol: 8e-2 },
} as const satisfies Record<string, Tolerance>;
