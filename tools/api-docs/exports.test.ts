/*
 * The export-doc check: an export without a doc comment on its own declaration fails, as does
 * an exported class's public member without one (own or inherited), and so does a file-top
 * JSDoc comment that tools would hand to the wrong declaration. (The
 * repository itself passes: `pnpm docs:check` runs this check.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkExportDocs, packageEntries } from "./exports.js";

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

/** A workspace with one package `@x/p` whose entry is src/index.ts, made of `files`. */
function workspace(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "export-docs-"));
  temps.push(root);
  const write = (f: string, text: string) => {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), text);
  };
  write(
    "tsconfig.json",
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "ESNext",
        moduleResolution: "Bundler",
        target: "ES2022",
      },
    }),
  );
  write(
    "packages/p/package.json",
    JSON.stringify({
      name: "@x/p",
      exports: { ".": { "@loop/source": "./src/index.ts" }, "./package.json": "./package.json" },
    }),
  );
  write(
    "packages/private/package.json",
    JSON.stringify({
      name: "@x/private",
      private: true,
      exports: { ".": { "@loop/source": "./src/index.ts" } },
    }),
  );
  for (const [f, text] of Object.entries(files)) write(`packages/p/src/${f}`, text);
  return root;
}

const messages = (root: string) =>
  checkExportDocs(root).map((p) => `${p.file}:${p.line}: ${p.message}`);

describe("checkExportDocs", () => {
  it("reads the entries from the packages' @loop/source exports, private packages left out", () => {
    const root = workspace({ "index.ts": "" });
    expect(packageEntries(root)).toEqual([
      { specifier: "@x/p", file: join(root, "packages/p/src/index.ts") },
    ]);
  });

  it("names an export without a doc comment, at its declaration, with the entry exporting it", () => {
    const root = workspace({
      "index.ts": 'export { documented, missing, type Shape } from "./a.js";\n',
      "a.ts": [
        "/** Has one. */",
        "export function documented(): number {",
        "  return 1;",
        "}",
        "",
        "export const missing = 2;",
        "",
        "// A line comment is not a doc comment.",
        "export type Shape = number[];",
        "",
      ].join("\n"),
    });
    expect(messages(root)).toEqual([
      'packages/p/src/a.ts:6: export "missing" (@x/p) has no doc comment on its declaration',
      'packages/p/src/a.ts:9: export "Shape" (@x/p) has no doc comment on its declaration',
    ]);
  });

  it("names an exported class's public members without a doc comment, own or inherited", () => {
    const root = workspace({
      "index.ts": 'export { Box } from "./box.js";\n',
      "box.ts": [
        "/** Has a size. */",
        "interface Sized {",
        "  /** Its size. */",
        "  size(): number;",
        "}",
        "/** A box. */",
        "export class Box implements Sized {",
        "  /** Documented. */",
        "  readonly width = 1;",
        "  readonly height = 2;",
        "  private hidden = 3;",
        "  #secret = 4;",
        "  constructor(readonly depth = 5) {}",
        "  size(): number {",
        "    return this.width * this.height * this.hidden * this.#secret;",
        "  }",
        "  get area(): number {",
        "    return this.width * this.height;",
        "  }",
        "  /** The box's area, set. */",
        "  set volume(v: number) {}",
        "  get volume(): number {",
        "    return 0;",
        "  }",
        "  grow(): void {}",
        "}",
        "",
      ].join("\n"),
    });
    expect(messages(root)).toEqual([
      'packages/p/src/box.ts:10: member "Box.height" (@x/p) has no doc comment on its declaration',
      'packages/p/src/box.ts:17: member "Box.area" (@x/p) has no doc comment on its declaration',
      'packages/p/src/box.ts:25: member "Box.grow" (@x/p) has no doc comment on its declaration',
    ]);
  });

  it("fails on a file-top JSDoc that leads an import or is cut off from the first declaration", () => {
    const root = workspace({
      "index.ts":
        'export { a } from "./a.js";\nexport { b } from "./b.js";\nexport { c } from "./c.js";\n',
      "a.ts":
        '/** About this file. */\nimport { b } from "./b.js";\n\n/** a. */\nexport const a = b;\n',
      "b.ts": "/**\n * About this file.\n */\n\nexport const b = 1;\n",
      "c.ts":
        '/* About this file: not JSDoc, so fine. */\nimport { b } from "./b.js";\n\n/** c. */\nexport const c = b;\n',
    });
    const m = messages(root);
    expect(m).toHaveLength(2);
    expect(m[0]).toMatch(/^packages\/p\/src\/a\.ts:1: a file-top \/\*\* comment leads an import/);
    expect(m[1]).toMatch(
      /^packages\/p\/src\/b\.ts:1: a file-top \/\*\* comment is separated from the first declaration/,
    );
  });
});
