/**
 * The native half of a package's golden-kernel suite: the same cases as the portable half, with
 * the package's native kernels enabled, each also asserting which native kernels it ran through
 * (withNativeCalls), so that a native case cannot pass on the portable loops alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KernelProfile, withNativeCalls } from "./native-calls.js";
import { nativeSuiteRuns } from "./native-suite.js";

/** A golden case: its name, the run that compares it, the native kernels it must call. */
export type NativeGoldenCase = readonly [name: string, run: () => void, kernels: readonly string[]];

/** Switching a package's native kernels on (building them first) and off. */
export interface NativeKernels {
  enable: () => Promise<{ ok: true } | { ok: false; error: string }>;
  disable: () => void;
}

/**
 * Register the cases' native tests (call inside the suite's `describe`): `native` switches the
 * package's native kernels on and off, `profile` is @loop/tensor/node's kernel profile.
 */
export function nativeGoldenCases(
  native: NativeKernels,
  profile: KernelProfile,
  cases: readonly NativeGoldenCase[],
): void {
  beforeAll(async () => {
    const r = await native.enable();
    if (!r.ok) throw new Error(r.error);
  });
  afterAll(() => native.disable());
  for (const [name, run, kernels] of cases) {
    const how = kernels.length
      ? `through ${kernels.join(", ")}`
      : "(no native twin: the portable reference loop)";
    it(`${name} matches the reference ${how}`, () => {
      const { calls } = withNativeCalls(profile, run);
      expect(calls).toEqual(expect.arrayContaining([...kernels]));
    });
  }
}

/**
 * A package's golden-kernel suites: every case on the portable kernels, then on the native ones
 * (`what` names them, `source` their C files) wherever they build, a failure under CI;
 * `profile` is @loop/tensor/node's kernel profile.
 */
export async function goldenKernelSuites(
  covers: string,
  cases: readonly NativeGoldenCase[],
  native: NativeKernels & { what: string; source: string },
  profile: KernelProfile,
): Promise<void> {
  describe(`golden kernels, portable: ${covers}`, () => {
    for (const [name, run] of cases) it(`${name} matches the reference`, run);
  });
  const built = await native.enable();
  native.disable();
  describe.runIf(nativeSuiteRuns(`golden kernels, native ${native.what}`, built))(
    `golden kernels, native (${native.source})`,
    () => nativeGoldenCases(native, profile, cases),
  );
}
