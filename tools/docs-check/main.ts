/**
 * `pnpm docs:check [--no-snippet]`: one line per problem (file:line: what), exit 1 if any.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkDocs, documents, formatProblem } from "./check.js";

const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const snippet = !process.argv.includes("--no-snippet");
const t0 = performance.now();
const problems = checkDocs(root, { snippet });
for (const p of problems) console.error(formatProblem(p));
const took = ((performance.now() - t0) / 1000).toFixed(1);
if (problems.length > 0) {
  console.error(`docs:check: ${problems.length} problem(s) (${took} s)`);
  process.exit(1);
}
console.log(
  `docs:check: ${documents(root).length} READMEs agree with benchmarks/RESULTS.md, docs/results.md and .ci/run${snippet ? "; the library snippet prints what README.md shows" : " (snippet not run)"} (${took} s)`,
);
