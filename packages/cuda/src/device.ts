/*
 * What the backend's ops need of a CUDA device: memory, copies, kernel launches on one stream
 * and reads that resolve when the copy has landed (the host never blocks while a step runs).
 * `@loop/cuda/node`'s `startCudaDevice` implements it over the driver API; `recordingDevice`
 * runs nothing and records what would run (launch plans, allocation counts, host tests).
 */
import { KERNELS, type KernelName } from "./kernel-table.js";

/** Grid or block dimensions. */
export type Dim3 = readonly [number, number, number];

/** A kernel argument: a device pointer (a number; 0 for null) or a scalar. */
export type PackedArg = number;

/** A GEMM through cuBLASLt (row-major C[M,N] = alpha·op(A)·op(B) + beta·C, fp32 C). */
export interface LtGemm {
  transA: boolean;
  transB: boolean;
  M: number;
  N: number;
  K: number;
  alpha: number;
  a: number;
  b: number;
  beta: number;
  c: number;
  /** Operand type: 0 fp32, 14 bf16 (cudaDataType). */
  abType: 0 | 14;
  /** 68 fp32 compute, 77 fp32 with tf32 operands (cublasComputeType_t). */
  compute: 68 | 77;
}

/** A CUDA device as the ops use it (see the file comment). */
export interface CudaDevice {
  /** For messages and run.json ("NVIDIA H100 80GB HBM3, sm_90"). */
  readonly name: string;
  /** The most dynamic shared memory one block may use, in bytes (absent: not limited here). */
  readonly maxSharedBytes?: number;
  /** Device memory of `bytes` bytes; its address. */
  alloc(bytes: number): number;
  free(ptr: number): void;
  /** Copy host values to `ptr` (enqueued; the array may change once this returns). */
  upload(ptr: number, data: ArrayBufferView): void;
  zero(ptr: number, bytes: number): void;
  copy(dst: number, src: number, bytes: number): void;
  /** The `bytes` bytes at `ptr` once everything enqueued before has run. */
  read(ptr: number, bytes: number): Promise<ArrayBuffer>;
  /** Enqueue `kernel` with its arguments packed by `packArgs`. */
  launch(kernel: KernelName, grid: Dim3, block: Dim3, shared: number, args: Uint8Array): void;
  /**
   * cuBLASLt's GEMM where the library was found (absent: the backend's own kernels): true when
   * it ran, false when cuBLASLt has no algorithm for this shape and layout (its "not
   * supported"); any other cuBLASLt error is thrown, never taken for a missing algorithm.
   */
  readonly ltGemm?: (g: LtGemm) => boolean;
  /** Release the device (context, modules, cached memory). */
  destroy(): void;
}

/**
 * The arguments of `kernel` packed for the driver: 8 bytes per parameter, the value at the
 * slot's start (little-endian). Throws, naming the kernel, when the count or a value does not
 * fit its parameter list.
 */
export function packArgs(kernel: KernelName, args: readonly PackedArg[]): Uint8Array {
  const sig = KERNELS[kernel];
  if (args.length !== sig.length)
    throw new Error(`cuda: ${kernel} takes ${sig.length} arguments, got ${args.length}`);
  const out = new Uint8Array(8 * sig.length);
  const view = new DataView(out.buffer);
  for (let i = 0; i < sig.length; i++) {
    const v = args[i]!;
    const kind = sig[i];
    if (!Number.isFinite(v) && kind !== "f")
      throw new Error(`cuda: ${kernel} argument ${i} is ${v}`);
    if (kind === "f") view.setFloat32(8 * i, v, true);
    else if (kind === "i") {
      if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31)
        throw new Error(`cuda: ${kernel} argument ${i} (int32) is ${v}`);
      view.setInt32(8 * i, v, true);
    } else {
      if (!Number.isInteger(v) || v < 0 || v > Number.MAX_SAFE_INTEGER)
        throw new Error(
          `cuda: ${kernel} argument ${i} (${kind === "p" ? "pointer" : "int64"}) is ${v}`,
        );
      view.setBigUint64(8 * i, BigInt(v), true);
    }
  }
  return out;
}
