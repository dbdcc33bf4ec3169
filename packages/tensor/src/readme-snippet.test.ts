/** The README's "Using it" example runs as shown: the loss falls and the gradient check passes. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const pkg = fileURLToPath(new URL("..", import.meta.url));

describe("README: Using it", () => {
  it("trains the XOR classifier and passes gradcheck", () => {
    const readme = readFileSync(join(pkg, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Using it"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
    // (written inside the package, so that "@loop/tensor" resolves as a user's import would)
    const dir = mkdtempSync(join(pkg, "node_modules", ".readme-"));
    const file = join(dir, "snippet.ts");
    writeFileSync(file, code);
    const tsx = fileURLToPath(import.meta.resolve("tsx"));
    const r = spawnSync(process.execPath, ["--import", tsx, "--conditions=@loop/source", file], {
      encoding: "utf8",
    });
    rmSync(dir, { recursive: true, force: true });
    expect(r.stderr).toBe("");
    const [start, end, check] = r.stdout.trim().split("\n");
    const first = Number(/^loss (\d+\.\d+), \|dL\/dw1\| \d+\.\d+$/.exec(start!)![1]);
    const last = Number(/^after 300 steps: loss (\d+\.\d+)$/.exec(end!)![1]);
    expect(last).toBeLessThan(first / 2);
    expect(check).toBe("gradcheck worst ratio ≤ 1: true");
  });
});
