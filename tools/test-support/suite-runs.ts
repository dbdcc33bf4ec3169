/**
 * The one rule for a test that cannot run on this machine: it is skipped with one printed line
 * naming why, except under CI (`CI` set, as `.ci/run` does), which installs everything the suites
 * need (a C compiler, the Vulkan loader and SwiftShader, Chromium, a Linux /dev/full): there a
 * skip is a failure, never a silent pass. Every conditional suite or test goes through here.
 */
export function suiteRuns(what: string, whyNot: string | null, ciHas: string): boolean {
  if (whyNot === null) return true;
  const line = `${what}: skipped, ${whyNot}`;
  if (process.env.CI) throw new Error(`${line}; CI ${ciHas}, so this is a failure`);
  console.warn(line);
  return false;
}
