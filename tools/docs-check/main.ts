/*
 * `pnpm docs:check [--no-snippet]`: one line per problem (file:line: what), exit 1 if any.
 * Besides the READMEs (check.ts): every example's output as docs/examples.md shows it
 * (tools/examples), a doc comment on every export of every package entry (tools/api-docs),
 * and docs/cli.md's recipe run as written (recipe.ts, in the background while the rest is checked).
 * `--no-snippet` skips running the README snippet, the examples and the recipe.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkExportDocs } from "../api-docs/exports.js";
import { listExamples, shownOutputs } from "../examples/examples.js";
import { checkExamplesFromSource } from "../examples/run-from-source.js";
import { checkDocs, documents, formatProblem } from "./check.js";
import { checkRecipeInBackground, RECIPE } from "./recipe.js";

const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const snippet = !process.argv.includes("--no-snippet");
const t0 = performance.now();
const recipe = snippet ? checkRecipeInBackground(root) : Promise.resolve([]);
const problems = [
  ...checkDocs(root, { snippet }),
  ...(snippet ? checkExamplesFromSource(root) : shownOutputs(root).problems),
  ...checkExportDocs(root),
  ...(await recipe),
];
for (const p of problems) console.error(formatProblem(p));
const took = ((performance.now() - t0) / 1000).toFixed(1);
if (problems.length > 0) {
  console.error(`docs:check: ${problems.length} problem(s) (${took} s)`);
  process.exit(1);
}
console.log(
  `docs:check: ${documents(root).length} READMEs agree with benchmarks/RESULTS.md, docs/results.md and .ci/run${snippet ? `; the library snippet and the ${listExamples(root).length} examples print what README.md and docs/examples.md show, ${RECIPE}'s commands run as written` : " (snippet, examples and recipe not run)"}; every package export and public class member has a doc comment (${took} s)`,
);
