/**
 * Whether a test suite of native kernels can run. Where the addon could not be built the suite is
 * skipped with one printed line naming why — except under CI, which installs a C compiler, so a
 * missing build there is a failure rather than a silent pass of the portable kernels alone.
 */
export function nativeSuiteRuns(
  what: string,
  ...builds: ({ ok: true } | { ok: false; error: string })[]
): boolean {
  const failed = builds.find((b): b is { ok: false; error: string } => !b.ok);
  if (!failed) return true;
  const line = `${what}: skipped, the native kernels were not built (${failed.error})`;
  if (process.env.CI) throw new Error(`${line}; CI installs a C compiler, so this is a failure`);
  console.warn(line);
  return false;
}
