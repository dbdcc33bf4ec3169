/**
 * The GPU correctness suites, found by path so that test files added or renamed by later work are
 * run too: every test file of `@loop/webgpu` (ops against their CPU oracle; the GPU model
 * against the CPU model; training against the CPU loss curve), the golden cases through
 * `looplm forward --backend webgpu`, and every other test file that opens a WebGPU device
 * through Dawn (the playground's browser test uses Chromium's WebGPU, not Dawn, and is not one).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export const SUITE_NAMES = ["ops", "model", "training", "golden", "other"] as const;
export type SuiteName = (typeof SUITE_NAMES)[number];

export interface Suite {
  name: SuiteName;
  what: string;
  /** Test files, relative to the repository root, sorted. */
  files: string[];
  /** Only tests whose full name matches count (vitest's -t), when the files test other backends too. */
  testNamePattern?: string;
}

const GOLDEN_FILES = [
  "packages/looplm/src/forward/golden.test.ts",
  "packages/looplm/src/forward/two-backends.test.ts",
];

/** The test files under `dir` (relative to `root`), skipping node_modules and dist. */
function testFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === "node_modules" || e.name === "dist") continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".test.ts")) out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

/** A test file that opens a Dawn device: it imports @loop/webgpu or the suites' GPU helper. */
function usesDawn(root: string, file: string): boolean {
  const text = readFileSync(join(root, file), "utf8");
  return /from "@loop\/(webgpu(\/node)?|test-support-gpu)"/.test(text);
}

/** The device model (the model written once, on the GPU's ops) against the CPU model. */
const MODEL_FILES = ["packages/looplm/src/gpu-device-model.test.ts"];
/** Training on the GPU (the one trainer step and AdamW on gpuBackendOps) against the CPU. */
const TRAINING_FILES = ["packages/looplm/src/gpu-training.test.ts"];

/** The suites of this checkout. */
export function findSuites(root: string): Suite[] {
  const model = MODEL_FILES.filter((f) => existsSync(join(root, f)));
  const training = TRAINING_FILES.filter((f) => existsSync(join(root, f)));
  // every WGSL op's test: @loop/webgpu's own, and those beside their CPU oracles in the
  // packages that own them (src/webgpu/*.test.ts)
  const ops = ["packages", "tools/test-support-gpu"]
    .flatMap((d) => testFiles(root, d))
    .filter(
      (f) =>
        (f.startsWith("packages/webgpu/src/") ||
          /^packages\/[^/]+\/src\/webgpu\//.test(f) ||
          f.startsWith("tools/test-support-gpu/")) &&
        !model.includes(f) &&
        !training.includes(f),
    );
  const others = ["packages", "tools", "benchmarks"]
    .flatMap((d) => testFiles(root, d))
    .filter(
      (f) =>
        !ops.includes(f) &&
        !model.includes(f) &&
        !training.includes(f) &&
        !f.startsWith("packages/playground/") &&
        !f.startsWith("tools/gpu-check/") &&
        !GOLDEN_FILES.includes(f) &&
        usesDawn(root, f),
    );
  return [
    {
      name: "ops",
      what: "every WGSL op against its CPU oracle (forward and gradients)",
      files: ops,
    },
    { name: "model", what: "the GPU looped model against the CPU model", files: model },
    { name: "training", what: "training on the GPU against the CPU loss curve", files: training },
    {
      name: "golden",
      what: "the golden cases through looplm forward --backend webgpu",
      files: GOLDEN_FILES,
      testNamePattern: "webgpu",
    },
    // (only while there are some: the other suites are what the check cannot do without)
    ...(others.length > 0
      ? [
          {
            name: "other" as const,
            what: "the other commands' webgpu paths (generate, eval, the bench's peak)",
            files: others,
          },
        ]
      : []),
  ];
}

/**
 * The chosen suites, each cut down to `files` when given (a suite left with none is dropped);
 * a file in none of them is an error naming it.
 */
export function chooseSuites(
  all: readonly Suite[],
  names: readonly SuiteName[],
  files: readonly string[] | null,
): Suite[] {
  const chosen = all.filter((s) => names.includes(s.name));
  if (files === null) return chosen;
  const known = new Set(chosen.flatMap((s) => s.files));
  const unknown = files.filter((f) => !known.has(f));
  if (unknown.length > 0)
    throw new Error(
      `--files: ${unknown.join(", ")} is not a test file of the suites chosen (${chosen.map((s) => s.name).join(", ") || "none"})`,
    );
  return chosen
    .map((s) => ({ ...s, files: s.files.filter((f) => files.includes(f)) }))
    .filter((s) => s.files.length > 0);
}
