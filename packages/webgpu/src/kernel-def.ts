/*
 * A compute kernel as data: its WGSL body plus a declaration of its uniform parameters and its
 * storage buffers, from which the binding header is generated. Every kernel uses one layout:
 *   @group(0) @binding(0) var<uniform> p: Params;          (the declared scalars, in order)
 *   @group(0) @binding(1…k) var<storage, …> name: array<T>; (the declared buffers, in order)
 * so a kernel author writes only the functions and refers to `p.<param>` and the buffer names.
 */

export type ParamType = "u32" | "i32" | "f32";
/**
 * Access and element type of a storage buffer: "read" (f32), "rw" (f32), "read:i32", "rw:u32"…;
 * "rw:atomic" is array<atomic<u32>> (integer counters; float atomics would not be deterministic);
 * ":vec4f" reads f32 data four at a time; ":f16" needs `enable: ["f16"]` (the device's shader-f16).
 */
export type BufferSpec =
  | `${"read" | "rw"}${"" | ":f32" | ":i32" | ":u32" | ":vec4f" | ":f16"}`
  | "rw:atomic";

/** A WGSL compute kernel as written: its name, uniform parameters, buffers and body. */
export interface KernelSpec {
  /** For error messages and pipeline labels. */
  name: string;
  params: Record<string, ParamType>;
  buffers: Record<string, BufferSpec>;
  /** WGSL after the generated header: helper functions and the `@compute fn main`. */
  body: string;
  /** Entry point (default "main"). */
  entry?: string;
  /** WGSL extensions the kernel enables ("f16", "subgroups"): the device must have the features. */
  enable?: readonly string[];
  /**
   * The body of a variant for devices with the `subgroups` feature, given the adapter's smallest
   * subgroup size; it must compute the same bits as `body` (the context picks it, see
   * GpuContext.subgroupReductions).
   */
  subgroupBody?: (minSubgroupSize: number) => string;
}

/**
 * A compiled-ready kernel: its WGSL code, entry point and the order of its parameters and buffers.
 */
export interface Kernel {
  readonly name: string;
  readonly code: string;
  readonly entry: string;
  readonly paramNames: readonly string[];
  readonly paramTypes: readonly ParamType[];
  readonly bufferNames: readonly string[];
  /** Per buffer, whether the kernel writes it (its bind-group layout's storage type). */
  readonly bufferWritable: readonly boolean[];
  /** The code of the subgroup variant (KernelSpec.subgroupBody), for a smallest subgroup size. */
  readonly subgroupCode?: (minSubgroupSize: number) => string;
}

/**
 * A kernel from its spec: generates the WGSL header (uniform struct and buffer bindings) in front
 * of its body.
 */
export function defineKernel(spec: KernelSpec): Kernel {
  const paramNames = Object.keys(spec.params);
  const paramTypes = paramNames.map((k) => spec.params[k]!);
  const bufferNames = Object.keys(spec.buffers);
  // A struct with no members is not valid WGSL: kernels without parameters get a padding field.
  const members = paramNames.length
    ? paramNames.map((k, i) => `  ${k}: ${paramTypes[i]},`).join("\n")
    : "  _unused: u32,";
  const header = (enable: readonly string[]) => {
    const lines = [
      ...enable.map((e) => `enable ${e};`),
      `struct Params {\n${members}\n}`,
      "@group(0) @binding(0) var<uniform> p: Params;",
    ];
    bufferNames.forEach((name, i) => {
      const [access, type = "f32"] = spec.buffers[name]!.split(":");
      const elem = type === "atomic" ? "atomic<u32>" : type;
      const mode = access === "rw" ? "read_write" : "read";
      lines.push(`@group(0) @binding(${i + 1}) var<storage, ${mode}> ${name}: array<${elem}>;`);
    });
    return lines.join("\n");
  };
  const enable = spec.enable ?? [];
  const sub = spec.subgroupBody;
  return {
    name: spec.name,
    code: `${header(enable)}\n${spec.body}`,
    ...(sub
      ? {
          subgroupCode: (min: number) =>
            `${header([...new Set([...enable, "subgroups"])])}\n${sub(min)}`,
        }
      : {}),
    entry: spec.entry ?? "main",
    paramNames,
    paramTypes,
    bufferNames,
    bufferWritable: bufferNames.map((n) => spec.buffers[n]!.startsWith("rw")),
  };
}

/** Workgroups needed to cover `n` items with `size` per group. */
export function groups(n: number, size: number): number {
  return Math.max(1, Math.ceil(n / size));
}

/** WebGPU's guaranteed limit on workgroups per dimension. */
const MAX_GROUPS = 65535;

/**
 * A grid of workgroups covering `n` items with `size` per group, folded into two dimensions when
 * one would exceed 65535 groups. Kernels recover the flat index with `flatIndex` (below).
 */
export function grid(n: number, size: number): [number, number, number] {
  const g = groups(n, size);
  if (g <= MAX_GROUPS) return [g, 1, 1];
  const y = Math.ceil(g / MAX_GROUPS);
  return [Math.ceil(g / y), y, 1];
}

/**
 * WGSL: the flat item index of a thread in a `grid` dispatch whose workgroup size is `size`
 * (use with `@builtin(global_invocation_id) gid` and `@builtin(num_workgroups) ng`).
 */
export function flatIndex(size: number): string {
  return `(gid.x + gid.y * ng.x * ${size}u)`;
}

/**
 * WGSL: the opening of a `grid` dispatch's `fn main` with one thread per item: binds the flat
 * item index (`flatIndex`) to `name` and returns from threads past `bound` (a WGSL expression,
 * e.g. "p.rows * p.w"). The kernel writes the rest of the body and the closing brace.
 */
export function flatEntry(size: number, bound = "p.n", name = "i"): string {
  return `@compute @workgroup_size(${size})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) ng: vec3u) {
  let ${name} = ${flatIndex(size)};
  if (${name} >= ${bound}) { return; }`;
}
