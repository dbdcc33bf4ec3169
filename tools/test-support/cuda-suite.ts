import { suiteRuns } from "./suite-runs.js";

/**
 * The rule for a suite that needs an NVIDIA GPU (`--backend cuda`): without one it is skipped
 * with one printed line naming why, under CI too — CI's machines have no NVIDIA GPU, and what
 * can be checked there (the kernels' nvcc build, the addon's build, the one-line refusal) is
 * tested by suites that always run. Where a GPU is, the suite runs.
 */
export function cudaSuiteRuns(
  what: string,
  started: { ok: true } | { ok: false; error: string },
): boolean {
  if (started.ok) return true;
  console.warn(`${what}: skipped, no CUDA GPU here (${started.error})`);
  return false;
}

/**
 * The rule for a suite on the CUDA host emulator (@loop/cuda/node `startEmulatedDevice`: the
 * CUDA C kernels compiled for the CPU), unlike a GPU suite: it needs only a C++ compiler, which
 * CI installs, so there a failed start is a failure (suiteRuns). The test starts the emulator and
 * passes what it returned: this package depends on no package of the workspace.
 */
export function emulatorSuiteRuns(
  what: string,
  started: { ok: true } | { ok: false; reason: string },
): boolean {
  return suiteRuns(what, started.ok ? null : started.reason, "installs g++");
}
