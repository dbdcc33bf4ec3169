/*
 * One adapter turns a CPU kernel into this backend's kernel of the same name, written once:
 *
 *   forward:  each HostTensor argument (alone, in an array, in an options object) becomes a CPU
 *             tensor over the same array — a fresh leaf with requiresGrad where the tape records
 *             and it needs a gradient — the CPU kernel runs, and its CPU outputs come back as
 *             HostTensors over their arrays;
 *   backward: a node on this backend's tape whose backward runs the CPU tape's backward from the
 *             CPU outputs, seeded with the incoming gradients, and returns the leaves' gradients;
 *   record:   each call counts one for its name (`calls()`).
 *
 * Arrays are shared, not copied, so a kernel that updates its arguments in place (the decode
 * kernels' states, AdamW's parameter and moments) updates this backend's tensors.
 */
import { cpuBackendOps } from "@loop/looped";
import { backward, type DecodeOps, IntTensor, type KernelOps, Tensor } from "@loop/tensor";
import { HostTensor, tape } from "./host-tensor.js";

const counts = new Map<string, number>();

/** How many times each kernel ran since the module loaded, by name. */
export const calls = (): Map<string, number> => new Map(counts);

/** Count one call of kernel `name`. */
export function count(name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

/** `v` with every HostTensor in it replaced by `f`'s value (arrays and plain objects walked). */
function mapTensors(v: unknown, f: (t: HostTensor) => unknown): unknown {
  if (v instanceof HostTensor) return f(v);
  if (Array.isArray(v)) return v.map((e) => mapTensors(e, f));
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, mapTensors(e, f)]));
  return v;
}

/** `v` with every CPU tensor in it replaced by `f`'s value. */
function mapCpu(v: unknown, f: (t: Tensor | IntTensor) => HostTensor): unknown {
  if (v instanceof Tensor || v instanceof IntTensor) return f(v);
  if (Array.isArray(v)) return v.map((e) => mapCpu(e, f));
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, mapCpu(e, f)]));
  return v;
}

/** The kernels this backend implements, on its own tensors (ints too: one tensor type). */
export type Kernels = KernelOps<HostTensor, HostTensor> & DecodeOps<HostTensor, HostTensor>;

/** This backend's kernel `name`: the CPU's kernel of that name, recorded and counted. */
export function delegate<K extends keyof Kernels>(name: K): Kernels[K] {
  const run = (...args: unknown[]) => {
    const kernel = (cpuBackendOps as unknown as Record<string, unknown>)[name];
    if (typeof kernel !== "function") throw new Error(`recording: the CPU has no kernel ${name}`);
    count(name);
    const leaves = new Map<HostTensor, Tensor>();
    const cpuArgs = mapTensors(args, (t) => {
      if (!leaves.has(t) && !(t.data instanceof Int32Array))
        leaves.set(t, new Tensor(t.data, t.shape, tape.recording && t.requiresGrad));
      return leaves.get(t) ?? new IntTensor(t.data as Int32Array, t.shape);
    }) as unknown[];
    const outs: [HostTensor, Tensor][] = [];
    const out = mapCpu(kernel(...cpuArgs), (c) => {
      const h = new HostTensor(c.data, c.shape);
      if (c instanceof Tensor) outs.push([h, c]);
      return h;
    });
    const inputs = [...leaves.keys()];
    tape.record(
      name,
      inputs,
      outs.map(([h]) => h),
      (gradOutputs) => {
        const live = outs.flatMap(([, c], k) => (c.requiresGrad && gradOutputs[k] ? [k] : []));
        for (const c of leaves.values()) c.grad = null;
        // (seeds copied: a CPU backward may hand a seed on as a leaf's gradient)
        if (live.length > 0)
          backward(
            live.map((k) => outs[k]![1]),
            live.map((k) => Float32Array.from(gradOutputs[k]!.data)),
          );
        return inputs.map((t) => {
          const g = leaves.get(t)!.grad;
          return g ? new HostTensor(g, t.shape) : null;
        });
      },
    );
    return out;
  };
  return run as unknown as Kernels[K];
}
