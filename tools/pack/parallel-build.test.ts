/** The parallel build's order: dependencies first, independent packages at once, failures named. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type BuildItem, buildInParallel, buildItems, type Runner } from "./parallel-build.js";
import { workspacePackages } from "./workspace.js";

const item = (name: string, ...needs: string[]): BuildItem => ({ name, dir: name, needs });

/** A runner whose builds end when the test says. */
function controlled() {
  const ends = new Map<string, (r: { code: number; output: string }) => void>();
  const run: Runner = (i) =>
    new Promise((resolve) => {
      ends.set(i.name, resolve);
    });
  const finish = async (name: string, code = 0) => {
    const end = ends.get(name)!;
    ends.delete(name);
    end({ code, output: code ? `${name}: error TS2322\n` : "" });
    // (let the scheduler start what this unblocks)
    for (let k = 0; k < 5; k++) await Promise.resolve();
  };
  return { run, finish, running: () => [...ends.keys()].sort() };
}

describe("buildInParallel", () => {
  it("starts a package once its dependencies are built, independent ones together", async () => {
    const c = controlled();
    const lines: string[] = [];
    const items = [
      item("tensor"),
      item("ssm", "tensor"),
      item("attention", "tensor"),
      item("looped", "ssm", "attention"),
    ];
    const all = buildInParallel(
      items,
      4,
      (l) => lines.push(l.replace(/ · .*$/, "").replace(/ in \S+ s/, "")),
      c.run,
    );
    await Promise.resolve();
    expect(c.running()).toEqual(["tensor"]);
    await c.finish("tensor");
    expect(c.running()).toEqual(["attention", "ssm"]);
    await c.finish("ssm");
    expect(c.running()).toEqual(["attention"]);
    await c.finish("attention");
    expect(c.running()).toEqual(["looped"]);
    await c.finish("looped");
    await all;
    expect(lines).toEqual([
      "building tensor (1/4)",
      "built tensor (1/4 done)",
      "building ssm (2/4)",
      "building attention (3/4)",
      "built ssm (2/4 done)",
      "built attention (3/4 done)",
      "building looped (4/4)",
      "built looped (4/4 done)",
    ]);
  });

  it("keeps to the concurrency", async () => {
    const c = controlled();
    const all = buildInParallel([item("a"), item("b"), item("c")], 2, () => {}, c.run);
    await Promise.resolve();
    expect(c.running()).toEqual(["a", "b"]);
    await c.finish("a");
    expect(c.running()).toEqual(["b", "c"]);
    await c.finish("b");
    await c.finish("c");
    await all;
  });

  it("names a failed build with its output, starting nothing after it", async () => {
    const c = controlled();
    const all = buildInParallel([item("a"), item("b", "a")], 2, () => {}, c.run);
    await Promise.resolve();
    await c.finish("a", 2);
    await expect(all).rejects.toThrow("the build of a failed (exit 2):\na: error TS2322");
    expect(c.running()).toEqual([]);
  });

  it("refuses a dependency outside the set, and a cycle", async () => {
    await expect(buildInParallel([item("a", "z")], 2, () => {}, controlled().run)).rejects.toThrow(
      "a needs z, which is not being built",
    );
    await expect(
      buildInParallel([item("a", "b"), item("b", "a")], 2, () => {}, controlled().run),
    ).rejects.toThrow("a dependency cycle among a, b");
  });

  it("orders this workspace's packages by their dependencies, not by their tests'", () => {
    const items = buildItems(workspacePackages(join(import.meta.dirname, "..", "..")));
    const looplm = items.find((i) => i.name === "looplm")!;
    expect(looplm.needs).toContain("@loop/looped");
    expect(items.find((i) => i.name === "@loop/tensor")!.needs).toEqual([]);
    // (@loop/attention's tests use @loop/webgpu; its build does not wait for it)
    expect(items.find((i) => i.name === "@loop/attention")!.needs).toEqual(["@loop/tensor"]);
  });
});
