/**
 * A suite's counts from vitest's JSON report (`--reporter=json`, Jest's format): passed, failed,
 * skipped. A file that failed to load counts as one failure; with a test-name pattern only the
 * matching tests count (the others are vitest's filtered-out skips).
 */
export interface SuiteCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** The failed tests (file › test) and files that failed to load, one line each. */
  failures: string[];
}

interface JsonAssertion {
  fullName: string;
  status: string;
}

interface JsonFile {
  name: string;
  status: string;
  message?: string;
  assertionResults: JsonAssertion[];
}

export interface VitestJson {
  testResults: JsonFile[];
}

/** Counts of `files` (relative paths) in `report`; `root` is the repository root. */
export function countSuite(
  report: VitestJson,
  root: string,
  files: readonly string[],
  testNamePattern?: string,
): SuiteCounts {
  const counts: SuiteCounts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  const pattern = testNamePattern ? new RegExp(testNamePattern) : null;
  const rel = (abs: string) => (abs.startsWith(`${root}/`) ? abs.slice(root.length + 1) : abs);
  const seen = new Set<string>();
  for (const f of report.testResults) {
    const file = rel(f.name);
    if (!files.includes(file)) continue;
    seen.add(file);
    const tests = f.assertionResults.filter((t) => !pattern || pattern.test(t.fullName));
    if (f.status === "failed" && f.assertionResults.length === 0) {
      counts.failed++;
      counts.failures.push(`${file}: ${(f.message ?? "failed to load").split("\n")[0]}`);
      continue;
    }
    for (const t of tests) {
      if (t.status === "passed") counts.passed++;
      else if (t.status === "failed") {
        counts.failed++;
        counts.failures.push(`${file} › ${t.fullName}`);
      } else counts.skipped++;
    }
  }
  for (const file of files)
    if (!seen.has(file)) {
      counts.failed++;
      counts.failures.push(`${file}: not in vitest's report (did not run)`);
    }
  return counts;
}

/**
 * Whether a suite passed: something ran, nothing failed, nothing skipped. A GPU suite skips only
 * where it found no adapter (tools/test-support/gpu-suite.ts), which is what the check is for.
 */
export function suitePassed(c: SuiteCounts): boolean {
  return c.passed > 0 && c.failed === 0 && c.skipped === 0;
}
