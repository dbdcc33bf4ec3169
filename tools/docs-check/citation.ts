/**
 * The paper looplm reproduces is named where a reader starts, and looplm can be cited:
 * - README.md and docs/results.md cite the seed paper (its title and arXiv id) in their opening
 *   lines;
 * - CITATION.cff (GitHub's convention) exists, names looplm with the umbrella package's version
 *   and licence and the repository, and lists among its references every paper the docs cite by
 *   arXiv id (so one cited in a doc is never missing from it), the seed paper first.
 * CITATION.cff is read line by line (its top-level keys and the `arxiv` identifiers), not as
 * full YAML: the checks need no more.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Problem } from "./commands.js";

/** The paper looplm reproduces. */
export const SEED_PAPER = {
  title: "Looped State-Space Language Models with Adaptive Exit-State Selection",
  arxiv: "2607.10110",
};

/** Lines from the top of a document within which the seed paper must be cited. */
export const OPENING_LINES = 12;

/** The documents that cite the seed paper in their opening lines. */
export const CITING = ["README.md", "docs/results.md"];

const ARXIV_ID = /arxiv(?:\.org\/abs\/|:\s?)(\d{4}\.\d{4,5})/gi;

/** The arXiv ids `text` cites (`arXiv:2510.25741` or an arxiv.org/abs link). */
export function arxivIds(text: string): string[] {
  return [...new Set([...text.matchAll(ARXIV_ID)].map((m) => m[1]!))];
}

/** The documents whose citations CITATION.cff must hold: README.md, docs/*.md, package READMEs. */
function citingDocs(root: string): string[] {
  const inDir = (dir: string) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter((f) => f.endsWith(".md"))
          .sort()
          .map((f) => `${dir}/${f}`)
      : [];
  const pkgs = existsSync(join(root, "packages"))
    ? readdirSync(join(root, "packages"))
        .sort()
        .map((p) => `packages/${p}/README.md`)
        .filter((f) => existsSync(join(root, f)))
    : [];
  return ["README.md", ...inDir("docs"), ...pkgs];
}

/** The value of the top-level `key:` of a CITATION.cff, unquoted, or undefined. */
function topLevel(cff: string, key: string): string | undefined {
  const m = new RegExp(`^${key}:\\s*(.*)$`, "m").exec(cff);
  return m ? m[1]!.trim().replace(/^(["'])(.*)\1$/, "$2") : undefined;
}

export function checkCitation(root: string): Problem[] {
  const problems: Problem[] = [];
  const read = (f: string) => readFileSync(join(root, f), "utf8");
  for (const file of CITING) {
    if (!existsSync(join(root, file))) continue;
    // (the title may wrap: compared with its whitespace collapsed)
    const opening = read(file).split("\n").slice(0, OPENING_LINES).join(" ").replace(/\s+/g, " ");
    if (!opening.includes(SEED_PAPER.title) || !arxivIds(opening).includes(SEED_PAPER.arxiv))
      problems.push({
        file,
        line: 1,
        message: `the first ${OPENING_LINES} lines do not cite the paper looplm reproduces ("${SEED_PAPER.title}", arXiv:${SEED_PAPER.arxiv})`,
      });
  }
  const cffFile = "CITATION.cff";
  if (!existsSync(join(root, cffFile)))
    return [
      ...problems,
      { file: cffFile, line: 1, message: "missing: how to cite looplm (GitHub's CITATION.cff)" },
    ];
  const cff = read(cffFile);
  const line = (key: string) => {
    const i = cff.split("\n").findIndex((l) => l.startsWith(`${key}:`));
    return i < 0 ? 1 : i + 1;
  };
  const fail = (key: string, message: string) =>
    problems.push({ file: cffFile, line: line(key), message });
  for (const key of ["cff-version", "message", "title", "authors", "type", "references"])
    if (topLevel(cff, key) === undefined) fail(key, `no top-level "${key}:"`);
  if (topLevel(cff, "type") !== undefined && topLevel(cff, "type") !== "software")
    fail("type", `type is "${topLevel(cff, "type")}", not "software"`);
  const pkg = JSON.parse(read("packages/looplm/package.json")) as {
    version: string;
    license: string;
    repository?: { url?: string };
  };
  if (topLevel(cff, "version") !== pkg.version)
    fail(
      "version",
      `version is "${topLevel(cff, "version")}", not looplm's ${pkg.version} (packages/looplm/package.json)`,
    );
  if (topLevel(cff, "license") !== pkg.license)
    fail("license", `license is "${topLevel(cff, "license")}", not looplm's ${pkg.license}`);
  const repo = pkg.repository?.url?.replace(/^git\+/, "").replace(/\.git$/, "");
  if (repo && topLevel(cff, "repository-code") !== repo)
    fail(
      "repository-code",
      `repository-code is "${topLevel(cff, "repository-code")}", not the repository ${repo}`,
    );
  const listed = [...cff.matchAll(/^\s+value:\s*["']?(?:arXiv:)?(\d{4}\.\d{4,5})/gm)].map(
    (m) => m[1]!,
  );
  if (listed[0] !== SEED_PAPER.arxiv)
    fail(
      "references",
      `the first reference is not the paper looplm reproduces (arXiv:${SEED_PAPER.arxiv})`,
    );
  for (const doc of citingDocs(root)) {
    const lines = read(doc).split("\n");
    for (const id of arxivIds(lines.join("\n"))) {
      if (listed.includes(id)) continue;
      const at = lines.findIndex((l) => arxivIds(l).includes(id));
      problems.push({
        file: doc,
        line: at + 1,
        message: `cites arXiv:${id}, which CITATION.cff's references do not list`,
      });
    }
  }
  return problems;
}
