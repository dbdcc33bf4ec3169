import { describe, expect, it } from "vitest";
import type { KernelName } from "../kernel-table.js";
import type { DriverAddon } from "./build-addon.js";
import { driverDevice } from "./start-device.js";

/** An addon that runs nothing: `state` says how the GPU answers. */
function fakeAddon(state: { hang?: boolean; fault?: string; blas?: number }) {
  const calls: string[] = [];
  const addon = {
    alloc: () => 4096,
    release() {},
    upload() {},
    zero() {},
    copy() {},
    launch: () => void calls.push("launch"),
    readStart: () => 7,
    readDone(t: number) {
      calls.push(`readDone ${t}`);
      if (state.fault) throw new Error(`${state.fault} (CUDA error 700)`);
      return !state.hang;
    },
    readTake: (_t: number, out: Uint8Array) => out.fill(1),
    readCancel: (t: number) => void calls.push(`readCancel ${t}`),
    waitWithin(ms: number) {
      calls.push(`waitWithin ${ms}`);
      if (state.fault) throw new Error(`the GPU failed: ${state.fault} (CUDA error 700)`);
      return !state.hang;
    },
    blasLtGemm: () => state.blas ?? 0,
  } as unknown as DriverAddon;
  return { addon, calls };
}

const fns = new Map<KernelName, number>([["fill", 0]]);
const opts = { name: "fake", maxSharedBytes: 1 << 16, timeoutMs: 30, sync: false, cublasLt: true };
const launchFill = (d: ReturnType<typeof driverDevice>) =>
  d.launch("fill", [1, 1, 1], [32, 1, 1], 0, new Uint8Array(24));
const gemm = {
  transA: false,
  transB: false,
  M: 2,
  N: 3,
  K: 4,
  alpha: 1,
  a: 1,
  b: 2,
  beta: 0,
  c: 3,
  abType: 0 as const,
  compute: 68 as const,
};

describe("the CUDA device's waits", () => {
  it("a read the GPU never answers fails after the limit, naming the read and the last launch", async () => {
    const { addon, calls } = fakeAddon({ hang: true });
    const d = driverDevice(addon, fns, opts);
    launchFill(d);
    await expect(d.read(4096, 64)).rejects.toThrow(
      /^cuda: a read of 64 bytes waited 0\.03 s for the GPU \(the last launch before it: kernel fill\); a kernel may hang \(LOOPLM_CUDA_TIMEOUT sets the limit\)$/,
    );
    expect(calls).toContain("readCancel 7");
  });

  it("a fault before a read names the last launch and how to find the failing kernel", async () => {
    const { addon } = fakeAddon({ fault: "an illegal memory access was encountered" });
    const d = driverDevice(addon, fns, opts);
    launchFill(d);
    await expect(d.read(4096, 8)).rejects.toThrow(
      "cuda: an illegal memory access was encountered (CUDA error 700) (a read of 8 bytes; the last launch before it: kernel fill); LOOPLM_CUDA_SYNC=1 names the kernel that failed",
    );
  });

  it("with LOOPLM_CUDA_SYNC every launch is waited for, and a fault names its kernel", () => {
    const { addon, calls } = fakeAddon({ fault: "an illegal memory access was encountered" });
    const d = driverDevice(addon, fns, { ...opts, sync: true });
    expect(() => launchFill(d)).toThrow(
      /^cuda: kernel fill failed: the GPU failed: an illegal memory access was encountered \(CUDA error 700\)$/,
    );
    expect(calls).toEqual(["launch", "waitWithin 30"]);
  });

  it("with LOOPLM_CUDA_SYNC a hung kernel is named within the limit", () => {
    const { addon } = fakeAddon({ hang: true });
    const d = driverDevice(addon, fns, { ...opts, sync: true });
    expect(() => launchFill(d)).toThrow(/^cuda: kernel fill did not finish within 0\.03 s/);
  });

  it("reads the landed bytes when the GPU answers", async () => {
    const { addon } = fakeAddon({});
    const d = driverDevice(addon, fns, opts);
    expect([...new Uint8Array(await d.read(4096, 3))]).toEqual([1, 1, 1]);
  });

  it("cuBLASLt's 'not supported' is answered as false; it ran is true", () => {
    expect(driverDevice(fakeAddon({ blas: 15 }).addon, fns, opts).ltGemm!(gemm)).toBe(false);
    expect(driverDevice(fakeAddon({ blas: 0 }).addon, fns, opts).ltGemm!(gemm)).toBe(true);
  });

  it("releasing the device waits for its work within the limit", () => {
    const { addon } = fakeAddon({ hang: true });
    expect(() => driverDevice(addon, fns, opts).destroy()).toThrow(
      "cuda: the work left at the device's release did not finish within 0.03 s",
    );
  });
});
