import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { corpusClozeItems } from "./cloze-files.js";

const SHAKESPEARE = fileURLToPath(
  new URL("../../../../testdata/data/tinyshakespeare.txt", import.meta.url),
);

describe("corpusClozeItems", () => {
  it("builds the cloze from the held-out tail of a corpus, not from its training text", async () => {
    const items = await corpusClozeItems(SHAKESPEARE, { limit: 50 });
    expect(items).toHaveLength(50);
    const { readFileSync } = await import("node:fs");
    const text = readFileSync(SHAKESPEARE, "utf8");
    const cut = Math.floor(0.95 * text.length);
    for (const it of items)
      expect(text.indexOf(it.context, cut - 1)).toBeGreaterThanOrEqual(cut - 1);
  });
});
