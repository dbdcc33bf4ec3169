/**
 * CPU kernels (`CpuKernels` of `@loop/tensor/kernel`, passed in) whose GEMM counts its calls: a
 * test that runs on them shows that the work really ran on the kernels it was given, not on
 * those of the registry.
 */
interface WithGemm {
  readonly gemm: { readonly fn: (...a: never[]) => void; readonly name: string };
}

/** `kernels` with their GEMM wrapped in a counter (`calls()`), under the name "counting". */
export function countingGemm<K extends WithGemm>(kernels: K): { kernels: K; calls: () => number } {
  let n = 0;
  const gemm = kernels.gemm.fn as (...a: unknown[]) => void;
  const fn = (...a: unknown[]) => {
    n++;
    gemm(...a);
  };
  return { kernels: { ...kernels, gemm: { fn, name: "counting" } } as K, calls: () => n };
}
