/*
 * A real downstream consumer: the packages packed as a registry would serve them (`pnpm pack`,
 * once), then (1) for each package an empty npm project (`npm init -y`: CommonJS) that installs
 * only that package's closure of tarballs and loads every entry point through `import` and
 * `require`, and (2) one project that installs the tarballs the examples use, type-checks every
 * `examples/*.ts` against the packed declarations and runs each, comparing what it prints with
 * docs/examples.md. External dependencies come from the npm registry through npm's cache
 * (`--prefer-offline`: a warm cache needs no network).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { gpuSuiteRuns, nativeBuildExpected } from "@loop/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareExampleOutput, listExamples, shownOutputs } from "../examples/examples.js";
import { packAll } from "./pack-all.js";
import { closure, workspacePackages } from "./workspace.js";

const root = join(import.meta.dirname, "..", "..");
const pkgs = workspacePackages(root);
const work = mkdtempSync(join(tmpdir(), "looplm-packed-"));
let tarballs = new Map<string, string>();

beforeAll(async () => {
  tarballs = await packAll(root, join(work, "packed"), "if-stale");
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** An empty project as `npm init -y` makes it (CommonJS), with `specs` installed into it. */
function project(name: string, specs: string[], type?: "module"): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name, version: "1.0.0", private: true, ...(type ? { type } : {}) }),
  );
  execFileSync(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--loglevel=error",
      ...specs,
    ],
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 300_000 },
  );
  return dir;
}

/** Load every entry of `name` by `require` and by `import`; the number of names each exports. */
const LOAD_ALL = `
const name = process.argv[1];
const { exports } = require(name + "/package.json");
(async () => {
  const out = {};
  for (const sub of Object.keys(exports).filter((s) => s !== "./package.json")) {
    const spec = sub === "." ? name : name + sub.slice(1);
    const required = Object.keys(require(spec)).length;
    const imported = Object.keys(await import(spec)).length;
    out[spec] = { required, imported };
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe("each package installs from the tarballs with only its closure", () => {
  it.each(pkgs.map((p) => p.name))("%s", (name) => {
    const needs = closure(name, pkgs);
    const dir = project(
      basename(name),
      needs.map((n) => tarballs.get(n)!),
    );
    // Nothing else of the workspace came along (the closure is all it needs)...
    const installed = pkgs
      .map((p) => p.name)
      .filter((n) => existsSync(join(dir, "node_modules", n, "package.json")));
    expect(installed).toEqual(needs);
    // ...and every entry point loads, from CommonJS (`require`) and from an ES module (`import`).
    const r = spawnSync(process.execPath, ["-e", LOAD_ALL, name], { cwd: dir, encoding: "utf8" });
    expect(r.stderr).toBe("");
    const loaded = JSON.parse(r.stdout) as Record<string, { required: number; imported: number }>;
    for (const [spec, n] of Object.entries(loaded)) {
      expect(n.required, spec).toBeGreaterThan(0);
      expect(n.required, spec).toBe(n.imported);
    }
    if (
      name === "@loop/looped" &&
      nativeBuildExpected("native kernels from the packed @loop/looped")
    ) {
      // One call switches on the native kernels of all three kernel packages, from the tarballs.
      const on = spawnSync(
        process.execPath,
        [
          "-e",
          `import("@loop/looped/node").then(async (m) => console.log(JSON.stringify(await m.enableNativeKernels())))`,
        ],
        { cwd: dir, encoding: "utf8", timeout: 300_000 },
      );
      const report = JSON.parse(on.stdout) as {
        enabled: boolean;
        reason?: string;
        kernels: string[];
      };
      expect(report.reason).toBeUndefined();
      const groups = new Set(report.kernels.map((k) => k.split("/")[0]));
      expect([...groups]).toEqual(expect.arrayContaining(["tensor", "ssm", "ssd", "attention"]));
    }
  });
});

describe("the examples, against the packed packages", () => {
  const examples = listExamples(root);
  const { shown, problems } = shownOutputs(root);
  let dir = "";
  beforeAll(() => {
    const types = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies[
      "@types/node"
    ];
    const webgpu = JSON.parse(readFileSync(join(root, "packages/webgpu/package.json"), "utf8"))
      .devDependencies.webgpu;
    const theirs = pkgs.filter((p) => p.name !== "looplm").map((p) => tarballs.get(p.name)!);
    dir = project("examples", [...theirs, `webgpu@${webgpu}`, `@types/node@${types}`], "module");
    mkdirSync(join(dir, "src"));
    for (const e of examples) cpSync(join(root, e), join(dir, "src", basename(e)));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          outDir: "out",
          types: ["node"],
        },
        include: ["src"],
      }),
    );
  }, 600_000);

  it("every example has its output on docs/examples.md", () => {
    expect(problems).toEqual([]);
    expect([...shown.keys()].sort()).toEqual(examples);
  });

  it("every example type-checks against the packed declarations (tsc, strict, NodeNext)", () => {
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(r.stdout + r.stderr).toBe("");
    expect(readdirSync(join(dir, "out")).sort()).toEqual(
      examples.map((e) => `${basename(e, ".ts")}.js`).sort(),
    );
  });

  it.each(examples)(
    "%s prints what docs/examples.md shows",
    (example) => {
      const js = join(dir, "out", `${basename(example, ".ts")}.js`);
      const r = spawnSync(process.execPath, [js], { cwd: dir, encoding: "utf8", timeout: 540_000 });
      expect(r.status, r.stderr).toBe(0);
      const shownOutput = shown.get(example)!;
      expect(compareExampleOutput(shownOutput, r.stdout, "run from the tarballs")).toEqual([]);
      // The GPU example must train on the GPU wherever the WebGPU suites run (under CI, on
      // SwiftShader); elsewhere it trains on the CPU and this prints why.
      const gpu = readFileSync(join(root, example), "utf8").includes("@loop/webgpu/node");
      if (gpu && !r.stderr.includes("training on the GPU"))
        gpuSuiteRuns(`${example} on the GPU`, { ok: false, error: r.stderr.trim() });
    },
    600_000,
  );
});
