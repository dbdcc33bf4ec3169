/**
 * Test support for the repository's own test data (`testdata/`, see its README): golden vectors
 * made by an independent PyTorch implementation of docs/model.md and docs/exit-gate.md, and small
 * public text files. Tolerance from docs/formats.md: forward |a − b| ≤ 1e-4 + 1e-4·|b|
 * elementwise; gradients the same after dividing both by the largest |b| of that tensor.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Absolute path of a file or folder under the repository's `testdata/`. */
export function testdataPath(...parts: string[]): string {
  return join(import.meta.dirname, "..", "..", "testdata", ...parts);
}

export function goldenPath(...parts: string[]): string {
  return testdataPath("golden", ...parts);
}

/** The whole-model cases: the folders of `testdata/golden/` holding a `config.json`. */
export function goldenModelCases(): string[] {
  return readdirSync(goldenPath(), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(goldenPath(e.name, "config.json")))
    .map((e) => e.name)
    .sort();
}

export interface GoldenTensor {
  data: Float32Array;
  shape: number[];
}

/**
 * All tensors of a golden safetensors file (docs/formats.md: an 8-byte little-endian header
 * length, the JSON header, the data; the golden files hold F32 only). Read here, not by
 * @loop/tensor: the reference goes through none of the code it checks, and this package stays
 * below every package whose tests use it.
 */
export function loadGolden(...parts: string[]): Map<string, GoldenTensor> {
  const path = goldenPath(...parts);
  const bytes = readFileSync(path);
  const start = 8 + Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.toString("utf8", 8, start)) as Record<string, SafetensorsEntry>;
  const tensors = new Map<string, GoldenTensor>();
  for (const [name, e] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    if (e.dtype !== "F32") throw new Error(`${path}: tensor "${name}" is ${e.dtype}, not F32`);
    const [begin, end] = e.data_offsets.map((o) => bytes.byteOffset + start + o);
    tensors.set(name, { data: new Float32Array(bytes.buffer.slice(begin, end)), shape: e.shape });
  }
  return tensors;
}

interface SafetensorsEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

export interface CloseReport {
  ok: boolean;
  worst: number;
  index: number;
  message: string;
}

/**
 * Compare `actual` to `expected` with the docs/formats.md tolerance. kind "forward" compares raw
 * values; kind "grad" first divides both by max |expected|.
 */
export function compareGolden(
  name: string,
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  kind: "forward" | "grad",
): CloseReport {
  if (actual.length !== expected.length) {
    return {
      ok: false,
      worst: Number.POSITIVE_INFINITY,
      index: -1,
      message: `${name}: length ${actual.length} vs expected ${expected.length}`,
    };
  }
  let scale = 1;
  if (kind === "grad") {
    let m = 0;
    for (let i = 0; i < expected.length; i++) m = Math.max(m, Math.abs(expected[i]!));
    scale = m > 0 ? 1 / m : 1;
  }
  let worst = 0;
  let index = -1;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]! * scale;
    const b = expected[i]! * scale;
    const excess = Math.abs(a - b) - (1e-4 + 1e-4 * Math.abs(b));
    const ratio = Math.abs(a - b) / (1e-4 + 1e-4 * Math.abs(b));
    if (!(excess <= 0) && (index < 0 || ratio > worst || Number.isNaN(a))) {
      worst = Number.isNaN(a) ? Number.POSITIVE_INFINITY : ratio;
      index = i;
    }
  }
  const ok = index < 0;
  const message = ok
    ? `${name}: ok`
    : `${name}: entry ${index} is ${actual[index]} but expected ${expected[index]} (${worst.toFixed(2)}× the ${kind} tolerance)`;
  return { ok, worst, index, message };
}

/** Throw unless `actual` matches `expected` within the docs/formats.md tolerance. */
export function expectGolden(
  name: string,
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  kind: "forward" | "grad",
): void {
  const r = compareGolden(name, actual, expected, kind);
  if (!r.ok) throw new Error(r.message);
}

/** One single-op case of `testdata/golden/kernels/` (docs/formats.md "Golden vectors"). */
export interface KernelCase {
  /** The `.json` beside the tensors: op, settings, formula, shapes. */
  spec: {
    op: string;
    settings: Record<string, unknown>;
    inputs: Record<string, number[]>;
    output: Record<string, number[]>;
    grads?: Record<string, number[]>;
  };
  /** A tensor of the case; throws naming the case when it is missing. */
  get(name: string): GoldenTensor;
  /** A fresh copy of a tensor's values (for inputs an op may write to). */
  copy(name: string): Float32Array;
  /** An integer input (stored as exact F32 values) as Int32Array. */
  ints(name: string): Int32Array;
}

export function loadKernelCase(name: string): KernelCase {
  const tensors = loadGolden("kernels", `${name}.safetensors`);
  const spec = JSON.parse(
    readFileSync(goldenPath("kernels", `${name}.json`), "utf8"),
  ) as KernelCase["spec"];
  const get = (n: string): GoldenTensor => {
    const t = tensors.get(n);
    if (!t) throw new Error(`golden kernels/${name}: no tensor "${n}"`);
    return t;
  };
  return {
    spec,
    get,
    copy: (n) => Float32Array.from(get(n).data),
    ints: (n) => Int32Array.from(get(n).data),
  };
}
