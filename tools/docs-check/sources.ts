/**
 * Where a README's figures may come from: the sections of the results files that name the
 * command that printed them and the commit it ran at. A section is the text from one heading to
 * the next; it names its command and its commit itself (heading or body) or through the heading
 * of a section it belongs to (a `## … (commit abc1234)` over `### … (\`pnpm bench model\`)`).
 */
import { type Figure, normaliseUnit } from "./figures.js";
import { type MdLine, type MdSection, mdLines, mdSections } from "./markdown.js";

export interface SourceSection {
  file: string;
  heading: string;
  start: number;
  /** Prose lines, normalised (see `normaliseText`). */
  prose: string[];
  /** Lines of fenced blocks and markdown tables, normalised. */
  tables: string[];
}

/** A command as the docs write one: in inline code or a shell block, env assignments first. */
const COMMAND =
  /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:env\s+(?:-u\s+\S+\s+)*)?(?:\/usr\/bin\/time\s+(?:-\S+\s+)*)?(?:pnpm|looplm|npx|node|tsx)\s/;
const COMMIT = /\bcommits?\b[^.\n]{0,24}?\b[0-9a-f]{7,40}\b/i;

function namesCommand(lines: MdLine[]): boolean {
  for (const l of lines) {
    if (l.isFence) continue;
    if (l.fence !== undefined) {
      if ((l.fence === "sh" || l.fence === "bash") && COMMAND.test(l.text.trim())) return true;
      continue;
    }
    for (const m of l.text.matchAll(/`([^`]+)`/g)) if (COMMAND.test(`${m[1]!} `)) return true;
  }
  return false;
}

function namesCommit(lines: MdLine[]): boolean {
  return lines.some((l) => l.fence === undefined && !l.isFence && COMMIT.test(l.text));
}

/** Spaces out of numbers' spelling, so that `6 – 12 ×` and `6–12×` read the same. */
export function normaliseText(text: string): string {
  return text
    .replace(/`/g, " ")
    .replace(/(\d)\s*[–-]\s*(?=\d)/g, "$1–")
    .replace(/(\d)\s*±\s*(?=\d)/g, "$1±")
    .replace(/(\d),(?=\d{3}(?!\d))/g, "$1")
    .replace(/(\d)\s+(?=[×%]|ms\b|µs\b|s\b|min\b|h\b|GFLOP\/s|TFLOP\/s|tok\/s)/g, "$1")
    .replace(/(\d)\s*(seconds?|minutes?|hours?|tokens\/s)\b/g, (_, d: string, u: string) => {
      return d + normaliseUnit(u);
    });
}

export function sourceSections(file: string, text: string): SourceSection[] {
  const sections = mdSections(mdLines(text));
  const chain = (s: MdSection): MdSection[] => (s.parent ? [s, ...chain(s.parent)] : [s]);
  const heads = (s: MdSection): MdLine[] =>
    chain(s)
      .slice(1)
      .map((p) => p.lines[0])
      .filter((l): l is MdLine => l !== undefined);
  const out: SourceSection[] = [];
  for (const s of sections) {
    const own = s.lines;
    const withHeads = [...own, ...heads(s)];
    if (!namesCommand(withHeads) || !namesCommit(withHeads)) continue;
    const prose: string[] = [];
    const tables: string[] = [];
    for (const l of own) {
      if (l.isFence) continue;
      const t = normaliseText(l.text);
      if (l.fence !== undefined || /^\s*\|/.test(l.text)) tables.push(t);
      else prose.push(t);
    }
    out.push({ file, heading: s.heading, start: s.start, prose, tables });
  }
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The key as a whole number: no digit or decimal part joined to either side. */
function token(key: string, after = ""): RegExp {
  return new RegExp(
    `(?<![\\d.]|\\d,)${escapeRegExp(key)}${escapeRegExp(after)}(?![\\d]|\\.\\d)`,
    "u",
  );
}

/**
 * Whether a section holds the figure: the same numbers with the same unit, as whole numbers.
 * A bare table cell does not stand for a figure with a unit (a column of `2`s would hold every
 * "2×"): a README quoting a table's ratio quotes the section's own summary of it.
 */
export function holds(section: SourceSection, f: Figure): boolean {
  const t = token(f.key, f.unit);
  return section.prose.some((l) => t.test(l)) || section.tables.some((l) => t.test(l));
}

export function findFigure(sections: SourceSection[], f: Figure): SourceSection | undefined {
  return sections.find((s) => holds(s, f));
}
