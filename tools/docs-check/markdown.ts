/**
 * The little Markdown structure docs:check needs: each line with the fenced block it sits in (and
 * that block's language), and the sections between headings with their ancestors. Not a general
 * Markdown parser: fences are ``` lines, headings are ATX (`#`) lines outside fences.
 */

export interface MdLine {
  /** 1-based line number in the file. */
  n: number;
  text: string;
  /** The block's language ("" for an untyped block) when inside a fence; undefined outside. */
  fence?: string;
  /** A fence line itself (opening or closing). */
  isFence: boolean;
}

export interface MdBlock {
  lang: string;
  /** Line number of the opening fence. */
  start: number;
  lines: string[];
}

export interface MdSection {
  heading: string;
  level: number;
  /** Line number of the heading (0 for the text before the first heading). */
  start: number;
  /** The section's own lines: from its heading to the next heading of any level. */
  lines: MdLine[];
  parent?: MdSection;
}

const FENCE = /^\s*```\s*([\w-]*)/;

export function mdLines(text: string): MdLine[] {
  const out: MdLine[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, i) => {
    const m = FENCE.exec(line);
    if (m) {
      out.push({ n: i + 1, text: line, isFence: true, fence });
      fence = fence === undefined ? m[1]! : undefined;
      return;
    }
    out.push({ n: i + 1, text: line, isFence: false, fence });
  });
  return out;
}

export function mdBlocks(lines: MdLine[]): MdBlock[] {
  const blocks: MdBlock[] = [];
  let cur: MdBlock | undefined;
  for (const l of lines) {
    if (l.isFence) {
      if (cur === undefined) {
        cur = { lang: FENCE.exec(l.text)![1]!, start: l.n, lines: [] };
      } else {
        blocks.push(cur);
        cur = undefined;
      }
    } else if (cur !== undefined) cur.lines.push(l.text);
  }
  return blocks;
}

export function mdSections(lines: MdLine[]): MdSection[] {
  const root: MdSection = { heading: "", level: 0, start: 0, lines: [] };
  const sections = [root];
  const stack = [root];
  for (const l of lines) {
    const h = l.fence === undefined && !l.isFence ? /^(#{1,6})\s+(.*)$/.exec(l.text) : null;
    if (h) {
      const level = h[1]!.length;
      while (stack.length > 1 && stack[stack.length - 1]!.level >= level) stack.pop();
      const s: MdSection = {
        heading: h[2]!,
        level,
        start: l.n,
        lines: [l],
        parent: stack[stack.length - 1],
      };
      sections.push(s);
      stack.push(s);
    } else sections[sections.length - 1]!.lines.push(l);
  }
  return sections;
}

/** Prose as docs:check reads it: inline code, link targets and HTML comments removed. */
export function prose(text: string): string {
  return text
    .replace(/<!--.*?-->/g, " ")
    .replace(/`[^`]*`/g, " ")
    .replace(/\]\([^)]*\)/g, "]");
}
