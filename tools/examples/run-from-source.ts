// docs:check's half of the examples: run each `examples/*.ts` from the packages' source (tsx,
// the `@loop/source` condition) and compare what it prints with docs/examples.md.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Problem } from "../docs-check/commands.js";
import { compareExampleOutput, shownOutputs } from "./examples.js";

/** Run every example with a shown output; problems name the page line that differs. */
export function checkExamplesFromSource(root: string, timeoutMs = 300_000): Problem[] {
  const { shown, problems } = shownOutputs(root);
  const tsx = fileURLToPath(import.meta.resolve("tsx"));
  for (const out of shown.values()) {
    const r = spawnSync(
      process.execPath,
      ["--import", tsx, "--conditions=@loop/source", join(root, out.example)],
      {
        cwd: root,
        encoding: "utf8",
        timeout: timeoutMs,
      },
    );
    if (r.error || r.status !== 0) {
      problems.push({
        file: out.example,
        line: 1,
        message: `failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? "").trim().slice(-1500)}`,
      });
      continue;
    }
    problems.push(...compareExampleOutput(out, r.stdout, "run from source"));
  }
  return problems;
}
