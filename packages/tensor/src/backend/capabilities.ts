/*
 * What a compute backend has, as data: the code above the backends reads these instead of asking
 * which backend it runs on. Each backend's package derives its own from what it found when it
 * started (the CUDA device's libraries, the WebGPU adapter's features); nothing outside it names
 * a backend to decide what the backend can do.
 */
import type { Precision } from "./precision.js";

/** Hardware and library features a backend may use (`BackendCapabilities.features`). */
export const BACKEND_FEATURES = [
  /** f16 arithmetic in its kernels (WebGPU's shader-f16). */
  "f16",
  /** Subgroup (warp) reductions in its kernels. */
  "subgroups",
  /** WebGPU subgroup-matrix products. */
  "subgroup-matrix",
  /** Tensor-core GEMMs (tf32, bf16). */
  "tensor-cores",
  /** NVIDIA's cuBLASLt runs its GEMMs. */
  "cublaslt",
] as const;
/** One of BACKEND_FEATURES. */
export type BackendFeature = (typeof BACKEND_FEATURES)[number];

/** What a started backend can do. */
export interface BackendCapabilities {
  /**
   * Where its tensors live: "host" (the CPU's memory: the CPU code paths read them directly) or
   * "device" (a GPU's memory: the commands move the model there and read results back).
   */
  readonly memory: "host" | "device";
  /** The precisions its matrix products offer (PRECISIONS); `--precision` refuses the others. */
  readonly precisions: readonly Precision[];
  /** How it decodes (`looplm generate`). */
  readonly decode: {
    /**
     * Whether each token advances a recurrent state (per loop step and layer: O(L) over L
     * tokens); otherwise each token recomputes the forward of the whole sequence so far.
     */
    readonly recurrent: boolean;
    /** The step policies it decodes with (@loop/looped's StepPolicy kinds; "full" always). */
    readonly policies: readonly string[];
  };
  /** What it trains. */
  readonly train: {
    /** Whether it runs custom mixers (ModelOptions.mixer) besides the built-in ones. */
    readonly customMixers: boolean;
  };
  /** The composite ops it runs fused (the optional `ModelOps` members it implements). */
  readonly fused: readonly string[];
  /** The hardware and library features it uses. */
  readonly features: readonly BackendFeature[];
  /** What its matrix products run on, in a few words ("cuBLASLt", "own kernels"). */
  readonly gemm: string;
}

/**
 * How many loop steps each generated token runs (@loop/looped's StepPolicy kinds): full depth, a
 * threshold on the exit gate, a fixed exit, an exit rule. Full depth first.
 */
export const STEP_POLICY_KINDS = ["full", "threshold", "fixed", "rule"] as const;

/**
 * The decoding `ops` offer: recurrent with every step policy where they implement the decode
 * kernels (`DecodeOps`: the decoders of @loop/looped keep the state on the backend), else full
 * depth by recomputing the sequence so far for every token.
 */
export function decodeCapability(ops: object): BackendCapabilities["decode"] {
  const o = ops as Record<string, unknown>;
  const recurrent = typeof o.mamba2Step === "function" && typeof o.attendStep === "function";
  return { recurrent, policies: recurrent ? STEP_POLICY_KINDS : ["full"] };
}

/** The optional composite members of `ModelOps` a backend may fuse. */
const FUSABLE = ["linears", "linearSplit", "projectedAttention"] as const;

/** The composite ops `ops` implements fused (for `BackendCapabilities.fused`). */
export function fusedComposites(ops: object): string[] {
  return FUSABLE.filter((k) => typeof (ops as Record<string, unknown>)[k] === "function");
}
