/**
 * What counts as a *figure* in a README — a number that states something measured — and how one
 * is written down so that the same figure can be found again in the results files.
 *
 * Outside inline code, link targets and fenced blocks with a language (commands, source), a
 * figure is:
 * 1. a number or range followed by a unit of speed, time or share:
 *    `×` (a ratio; `32×256` is a shape, not a figure), `%`, `ms`, `µs`, `s`, `min`, `h`,
 *    `GFLOP/s`, `TFLOP/s`, `tok/s` (and the words: seconds, minutes, hours, tokens/s),
 *    optionally with `± spread` before the unit: `6–12×`, `21 s`, `70.77 ± 0.74 %`;
 * 2. `mean ± spread` without a unit: `25.8 ± 0.3`;
 * 3. any other decimal number (`25.8`, a perplexity), save version numbers (`1.2.3`, or after
 *    Node, PyTorch, Python, Debian, gpu.js, pnpm, `v`, `@`), arXiv ids (after `arXiv:`) and
 *    mantissas (`2.5e-4`);
 * 4. a markdown table cell holding nothing but a decimal or a number with a unit (also MiB,
 *    MB, GiB, GB), or `a → b`: whole numbers alone in a cell are counts and settings.
 * A line ending in `<!-- docs-check: not a measurement -->` is a definition (a split ratio, a
 * default), not a figure, and is skipped: the marker is for text such as "5 % of the corpus".
 */
import { type MdLine, prose } from "./markdown.js";

export interface Figure {
  /** 1-based line number. */
  line: number;
  /** The figure as written. */
  text: string;
  /** Its numbers, normalised: no spaces, "–" for ranges, "±" for spreads, no thousands commas. */
  key: string;
  /** The unit normalised (`s`, `min`, `h`, `ms`, `%`, `×`, …), "" for none. */
  unit: string;
}

export const NOT_A_MEASUREMENT = "<!-- docs-check: not a measurement -->";

const NUM = String.raw`\d+(?:,\d{3})*(?:\.\d+)?`;
const UNITS = [
  "GFLOP/s",
  "TFLOP/s",
  "tokens/s",
  "tok/s",
  "minutes",
  "minute",
  "seconds",
  "second",
  "hours",
  "hour",
  "min",
  "ms",
  "µs",
  "s",
  "h",
  "×",
  "%",
];
const UNIT = `(?:${UNITS.map((u) => u.replace("/", "\\/")).join("|")})`;
// after a word unit no letter may follow ("15 steps" is not "15 s"); after × no digit (a shape)
const UNIT_END = String.raw`(?:(?<=[×])(?!\s?\d)|(?<=%)|(?<=[a-zµ/])(?![\w/]))`;
const START = String.raw`(?<![\w.,/\-−+])`;

const WITH_UNIT = new RegExp(
  `${START}(${NUM}(?:\\s*[–-]\\s*${NUM})?(?:\\s*±\\s*${NUM})?)\\s?(${UNIT})${UNIT_END}`,
  "gu",
);
const SPREAD = new RegExp(`${START}(${NUM}\\s*±\\s*${NUM})(?![\\d.])`, "gu");
const DECIMAL = new RegExp(`${START}(\\d+\\.\\d+)(?![\\d.]|e[-+]?\\d|\\.\\d)`, "gu");
// (an arXiv id, arXiv:2510.25741, names a paper: it is no measurement either)
const VERSION_BEFORE = /(?:node|pytorch|python|debian|gpu\.js|pnpm|biome|v|@|version|arxiv:)\s?$/i;

export function normaliseKey(numbers: string): string {
  return numbers
    .replace(/\s+/g, "")
    .replace(/-/g, "–")
    .replace(/(\d),(?=\d{3})/g, "$1");
}

export function normaliseUnit(unit: string): string {
  if (/^(seconds?|s)$/.test(unit)) return "s";
  if (/^(minutes?|min)$/.test(unit)) return "min";
  if (/^(hours?|h)$/.test(unit)) return "h";
  if (unit === "tokens/s") return "tok/s";
  return unit;
}

/** The figures of one line of prose (already stripped of inline code). */
export function proseFigures(text: string, line: number): Figure[] {
  const found: (Figure & { at: number })[] = [];
  const taken: [number, number][] = [];
  const overlaps = (a: number, b: number) => taken.some(([x, y]) => a < y && b > x);
  const add = (m: RegExpExecArray, numbers: string, unit: string) => {
    const end = m.index + m[0].length;
    if (overlaps(m.index, end)) return;
    taken.push([m.index, end]);
    const f = { line, text: m[0], key: normaliseKey(numbers), unit: normaliseUnit(unit) };
    found.push({ ...f, at: m.index });
  };
  for (const m of text.matchAll(WITH_UNIT)) add(m, m[1]!, m[2]!);
  for (const m of text.matchAll(SPREAD)) add(m, m[1]!, "");
  for (const m of text.matchAll(DECIMAL)) {
    if (VERSION_BEFORE.test(text.slice(0, m.index))) continue;
    add(m, m[1]!, "");
  }
  return found.sort((a, b) => a.at - b.at).map(({ at: _, ...f }) => f);
}

const CELL = new RegExp(
  `^[~≈]?\\s*(${NUM}(?:\\s*[–-]\\s*${NUM})?(?:\\s*±\\s*${NUM})?)\\s?(${UNIT}|MiB|MB|GiB|GB|KiB)?$`,
  "u",
);
const ARROW_CELL = new RegExp(`^(${NUM})\\s*→\\s*(${NUM})$`, "u");

/** The numeric cells of a markdown table row (`| a | b |`). */
export function tableFigures(text: string, line: number): Figure[] {
  if (/^\s*\|[\s|:-]*$/.test(text)) return []; // the |---|---| separator
  const cells = prose(text)
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((c) => c.trim());
  const found: Figure[] = [];
  for (const c of cells) {
    const m = CELL.exec(c);
    // a whole number without a unit in a table is a count or a setting (threads, steps)
    if (m && (m[2] !== undefined || /[.±]/.test(m[1]!))) {
      found.push({ line, text: c, key: normaliseKey(m[1]!), unit: normaliseUnit(m[2] ?? "") });
      continue;
    }
    const a = ARROW_CELL.exec(c);
    if (a)
      for (const n of [a[1]!, a[2]!]) found.push({ line, text: n, key: normaliseKey(n), unit: "" });
  }
  return found;
}

/**
 * Every figure of a document's prose and tables. Fenced blocks are not read here: typed ones
 * are commands and source, untyped ones are printed output that docs:check compares whole.
 */
export function docFigures(lines: MdLine[]): Figure[] {
  const out: Figure[] = [];
  for (const l of lines) {
    if (l.isFence || l.fence !== undefined) continue;
    if (l.text.trimEnd().endsWith(NOT_A_MEASUREMENT)) continue;
    if (/^\s*\|/.test(l.text)) {
      const cells = tableFigures(l.text, l.n);
      const covered = new Set(cells.map((c) => c.key));
      out.push(...cells);
      // numbers with units inside wordier cells ("6.7 → 7.3 s", "2× faster")
      for (const f of proseFigures(prose(l.text), l.n)) if (!covered.has(f.key)) out.push(f);
      continue;
    }
    out.push(...proseFigures(prose(l.text), l.n));
  }
  return out;
}
