/**
 * The GPU backend sits below the model (docs/architecture.md): its package.json names none of
 * the packages above it, in any dependency field.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** The packages above the backend layer that @loop/webgpu must not depend on. */
const PACKAGES_ABOVE_THE_BACKEND = ["@loop/train", "@loop/tasks", "@loop/eval"];

describe("@loop/webgpu's dependencies", () => {
  it("name none of the packages above the backend layer", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    const named = [
      "dependencies",
      "devDependencies",
      "peerDependencies",
      "optionalDependencies",
    ].flatMap((field) => Object.keys(pkg[field] ?? {}));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((n) => PACKAGES_ABOVE_THE_BACKEND.includes(n))).toEqual([]);
  });
});
