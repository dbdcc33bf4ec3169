/**
 * docs/playground.png shows the page as it is: when the screenshot is taken
 * (`pnpm --filter @loop/playground screenshot`) the text of the page it shows is written beside
 * it (docs/playground.txt), and docs:check compares that text with the text of
 * packages/playground/index.html now. A changed page fails until the screenshot is retaken.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Problem } from "./commands.js";

export const SCREENSHOT = "docs/playground.png";
/** The page's text as the screenshot shows it. */
export const SCREENSHOT_TEXT = "docs/playground.txt";
export const PAGE = "packages/playground/index.html";

/**
 * The visible text of an HTML page, one line per block of text: scripts, styles and comments
 * left out, tags dropped, entities read, whitespace collapsed.
 */
export function pageText(html: string): string {
  const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', nbsp: " " };
  return html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, "")
    .split(/<[^>]+>/)
    .map((t) =>
      t
        .replace(/&(#\d+|\w+);/g, (m, e: string) =>
          e.startsWith("#") ? String.fromCodePoint(Number(e.slice(1))) : (entities[e] ?? m),
        )
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter((t) => t !== "")
    .join("\n");
}

export function checkScreenshot(root: string): Problem[] {
  if (!existsSync(join(root, PAGE)) || !existsSync(join(root, SCREENSHOT))) return [];
  const retake = "retake it with `pnpm --filter @loop/playground screenshot`";
  if (!existsSync(join(root, SCREENSHOT_TEXT)))
    return [
      {
        file: SCREENSHOT,
        line: 1,
        message: `no ${SCREENSHOT_TEXT} says which page it shows: ${retake}`,
      },
    ];
  const shown = readFileSync(join(root, SCREENSHOT_TEXT), "utf8").trimEnd().split("\n");
  const now = pageText(readFileSync(join(root, PAGE), "utf8")).split("\n");
  const i = now.findIndex((l, k) => l !== shown[k]);
  if (i < 0 && now.length === shown.length) return [];
  const at = i < 0 ? Math.min(now.length, shown.length) : i;
  return [
    {
      file: SCREENSHOT,
      line: 1,
      message: `shows an older ${PAGE}: its text differs from ${SCREENSHOT_TEXT} at line ${at + 1} ("${now[at] ?? "(end)"}" now, "${shown[at] ?? "(end)"}" shown); ${retake}`,
    },
  ];
}
