/**
 * Every kernel's WGSL through a second compiler: naga (wgpu's and Firefox's WGSL front end and
 * validator, as WebAssembly), beside Tint, which compiles them in Dawn. Two reasons:
 * - The variants this machine's adapter cannot run are compiled nowhere else before they reach a
 *   GPU: the GEMM's native-f16 loads (`enable f16;`, array<f16>) need `shader-f16`, which
 *   SwiftShader lacks (the suites test them through the packed fallback). naga type-checks them.
 * - WGSL that only one compiler accepts breaks on the other browser's engine.
 *
 * Every kernel the package defines is recorded at `defineKernel` (module-level ones by importing
 * every module under kernels/ and ops/, the factories' by calling them over their variants), and
 * each must parse and validate, its subgroup variant for every smallest subgroup size WebGPU
 * allows (4–128) too. No GPU needed: this runs everywhere.
 */
import { readdirSync } from "node:fs";
import { parseWgsl, validate } from "naga-wasm";
import { describe, expect, it, vi } from "vitest";
import type { Kernel } from "../kernel-def.js";
import type { BinaryFn } from "./broadcast.js";
import type { GemmLoad, GemmSegments } from "./gemm.js";
import type { UnaryName } from "./unary.js";

const defined: Kernel[] = [];
vi.mock("../kernel-def.js", async (importOriginal) => {
  const orig = await importOriginal<typeof import("../kernel-def.js")>();
  return {
    ...orig,
    defineKernel: (spec: Parameters<typeof orig.defineKernel>[0]) => {
      const k = orig.defineKernel(spec);
      defined.push(k);
      return k;
    },
  };
});

/** naga's error for this code, or null. */
function nagaError(code: string): string | null {
  try {
    // naga (v30) implements the subgroup built-ins but not yet the `enable subgroups;` directive
    // (wgpu gates them by a device feature), so the directive is dropped for it
    validate(parseWgsl(code.replace(/^enable subgroups;$/m, "")));
    return null;
  } catch (e) {
    return String((e as { formatted?: string }).formatted ?? e);
  }
}

// Records (not lists) so that the type checker fails this file when a name is added
const UNARY: Record<UnaryName, true> = {
  exp: true,
  neg: true,
  negExp: true,
  log: true,
  sigmoid: true,
  logsigmoid: true,
  relu: true,
  silu: true,
  softplus: true,
};
const BINARY: Record<BinaryFn, true> = {
  add: true,
  sub: true,
  mul: true,
  div: true,
  negmul: true,
  expand: true,
};
const LOADS: Record<GemmLoad, true> = { f32: true, vec4: true, f16: true, f16packed: true };
const SEGMENTS: GemmSegments[] = [
  { A: "rows" },
  { A: "cols" },
  { B: "rows" },
  { B: "cols" },
  { C: "rows" },
  { C: "cols" },
  { A: "cols", B: "cols", C: "cols" },
];

/**
 * The exported functions that make kernels: those called over their variants below, and those
 * whose kernels are all module-level constants (recorded by the imports).
 */
const FACTORIES = ["gemmKernel", "unaryKernel", "binaryKernel", "attentionKernels"];
const MODULE_LEVEL = ["columnSumKernel", "defineRowKernel"];

async function importAll(dir: string): Promise<Record<string, unknown>[]> {
  const url = new URL(dir, import.meta.url);
  const files = readdirSync(url).filter((f) => f.endsWith(".ts") && !f.includes(".test"));
  return Promise.all(files.map((f) => import(/* @vite-ignore */ new URL(f, url).href)));
}

describe("every WGSL kernel through naga, a second compiler", async () => {
  const modules = [...(await importAll("./")), ...(await importAll("../ops/"))];
  const { gemmKernel, GEMM_TILE, GEMM_TILE_LARGE } = await import("./gemm.js");
  const { unaryKernel } = await import("./unary.js");
  const { binaryKernel } = await import("./broadcast.js");
  const { attentionKernels } = await import("./attention.js");
  const loads = Object.keys(LOADS) as GemmLoad[];
  for (const transA of [false, true])
    for (const transB of [false, true])
      for (const tile of [GEMM_TILE, GEMM_TILE_LARGE]) {
        for (const loadA of loads)
          for (const loadB of loads) gemmKernel(transA, transB, tile, loadA, loadB);
        for (const seg of SEGMENTS) gemmKernel(transA, transB, tile, "f32", "f32", seg);
      }
  for (const op of Object.keys(UNARY) as UnaryName[])
    for (const pass of ["forward", "backward"] as const) unaryKernel(op, pass);
  for (const fn of Object.keys(BINARY) as BinaryFn[]) binaryKernel(fn);
  // head dims the models use, on the 16 KiB WebGPU guarantees and the 32 KiB most GPUs have
  for (const hd of [8, 16, 32, 64, 128])
    for (const bytes of [16384, 32768]) attentionKernels(hd, bytes);

  it("knows every exported kernel factory (a new one must be called over its variants above)", () => {
    const factories = modules.flatMap((m) =>
      Object.entries(m)
        .filter(([name, v]) => typeof v === "function" && /Kernels?$/.test(name))
        .map(([name]) => name),
    );
    expect(new Set(factories)).toEqual(new Set([...FACTORIES, ...MODULE_LEVEL]));
  });

  it("records the kernels, the native-f16 and subgroup variants among them", () => {
    expect(defined.length).toBeGreaterThan(200);
    expect(defined.some((k) => /^enable f16;$/m.test(k.code))).toBe(true);
    expect(defined.some((k) => k.subgroupCode)).toBe(true);
  });

  it("parses and validates each", () => {
    const failures: string[] = [];
    for (const k of defined) {
      const variants: [string, string][] = [["", k.code]];
      if (k.subgroupCode)
        for (const m of [4, 8, 16, 32, 64, 128])
          variants.push([` (subgroups of ${m})`, k.subgroupCode(m)]);
      for (const [what, code] of variants) {
        const err = nagaError(code);
        if (err) failures.push(`${k.name}${what}: ${err}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
