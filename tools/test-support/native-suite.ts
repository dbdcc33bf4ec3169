/**
 * Whether the native-kernel tests can run. Where no C compiler is installed (or the addon could
 * not be built) they are skipped with one printed line naming why — except under CI, which
 * installs a C compiler, so a missing build there is a failure rather than a silent pass of the
 * portable kernels alone (suite-runs.ts).
 */
import { execFileSync } from "node:child_process";
import { expect, it } from "vitest";
import { suiteRuns } from "./suite-runs.js";

const CI_HAS = "installs a C compiler";

/** Whether a suite comparing native kernels runs, given how building their addons went. */
export function nativeSuiteRuns(
  what: string,
  ...builds: ({ ok: true } | { ok: false; error: string })[]
): boolean {
  const failed = builds.find((b): b is { ok: false; error: string } => !b.ok);
  return suiteRuns(
    what,
    failed ? `the native kernels were not built (${failed.error})` : null,
    CI_HAS,
  );
}

/** Why this machine cannot build the native addons (no usable C compiler), or null. */
function noCompiler(): string | null {
  const v = (process.env.LOOPLM_NATIVE ?? "").toLowerCase();
  if (v === "0" || v === "off" || v === "false") return "native kernels disabled by LOOPLM_NATIVE";
  const cc = process.env.CC ?? "cc";
  try {
    execFileSync(cc, ["--version"], { stdio: "ignore", timeout: 30_000 });
    return null;
  } catch (e) {
    return `no C compiler: ${cc} --version failed (${(e as Error).message.split("\n")[0]})`;
  }
}

/**
 * Whether a test that a native build must succeed runs: wherever a C compiler is installed it
 * does (and then a failed build fails it); elsewhere one printed line says why, a failure under CI.
 */
export function nativeBuildExpected(what: string): boolean {
  return suiteRuns(what, noCompiler(), CI_HAS);
}

/**
 * The test that the addon `name` (buildNativeAddon's first argument, `what` in messages) builds:
 * wherever a C compiler is installed the build must work (the error is the failure message);
 * elsewhere one printed line says why, a failure under CI (which installs gcc).
 */
export function itBuildsNativeAddon(
  name: string,
  built: { ok: true; path: string } | { ok: false; error: string },
  what = name,
): void {
  it.runIf(nativeBuildExpected(`the native ${what} addon build`))(
    "builds with this machine's C compiler",
    () => {
      expect(built.ok ? built.path : built.error).toMatch(
        new RegExp(`${name}-[0-9a-f]{16}\\.node$`),
      );
    },
  );
}
