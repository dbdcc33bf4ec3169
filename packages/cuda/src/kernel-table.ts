/**
 * Every CUDA kernel of the backend (packages/cuda/kernels/*.cu) with its parameter list, one
 * letter per parameter: `p` a device pointer (a tensor, or null), `i` an int32, `l` an int64,
 * `f` a float32. Launches pack their arguments from it (device.ts `packArgs`), so a launch whose
 * arguments do not fit is refused on the host, before any device sees it; a test checks the
 * table against the CUDA declarations.
 */
export const KERNELS = {
  rope: "liiipppfp",
  attn_fwd: "iiiiipppppp",
  attn_bwd_dq: "iiiiippppppppp",
  attn_bwd_dkv: "iiiiippppppppp",
  conv_silu_fwd: "iiiipppppp",
  conv_silu_gpre: "iiiippppppp",
  conv_bwd_x: "iiiippppi",
  conv_bwd_w: "iiiipppppi",
  conv_bwd_init: "iiiippppi",
  binary_bcast: "llippp",
  axpy: "lfpfp",
  affine_fwd: "lffpp",
  fill: "lfp",
  exp_fwd: "lpp",
  mul_bwd: "lippp",
  sigmoid_fwd: "lpp",
  sigmoid_bwd: "lippp",
  negexp_fwd: "lpp",
  logsigmoid_fwd: "lpp",
  logsigmoid_bwd: "lippp",
  relu_fwd: "lpp",
  relu_bwd: "lippp",
  softplus_bias_fwd: "liiffppp",
  softplus_bias_bwd: "liiffpppp",
  swiglu_fwd: "lppp",
  swiglu_bwd: "lppppp",
  copy_cols: "lipiipiii",
  col_sum: "lippi",
  embedding_fwd: "liippp",
  embedding_bwd: "liippp",
  gemm_f32: "iiiiifpipifpi",
  gemm_bf16: "iiiiifpipifpi",
  gemm_tf32: "iiiiifpipifpi",
  cast_bf16: "lpp",
  ce_rows: "ipppp",
  ce_rows_bwd: "ipppppi",
  masked_mean: "lpppp",
  masked_mean_bwd: "lpppp",
  rmsnorm_fwd: "ifpppp",
  rmsnorm_bwd: "ipppppi",
  norm_wgrad: "liippppi",
  gated_rmsnorm_fwd: "iifpppppp",
  gated_rmsnorm_bwd: "iipppppppp",
  sum_squares: "lppl",
  norm_finish: "lpp",
  adamw: "lppppffffffppf",
  guard_finite: "lpp",
  scale_clip: "lppf",
  ssd_fwd: "iiiiippppppppppp",
  ssd_bwd: "iiiiipppppppppppppppppp",
  ssd_group_sum: "liiippi",
  mamba2_step_conv: "iiiiippppppp",
  mamba2_step_ssm: "iiiiiiiippppppppff",
  kv_append: "iiiiippppp",
  attn_decode: "iiiiiifpppppp",
} as const;

/** The name of a kernel of the backend. */
export type KernelName = keyof typeof KERNELS;

/** The CUDA source files, in the order they are joined into one compilation unit. */
export const KERNEL_FILES = [
  "gemm.cu",
  "elementwise.cu",
  "norms.cu",
  "embedding.cu",
  "loss.cu",
  "conv.cu",
  "ssd.cu",
  "attention.cu",
  "optim.cu",
  "decode.cu",
] as const;

/**
 * Dynamic shared memory a kernel may ask for beyond the default 48 KiB (the SSD scans keep the
 * [N, P] state there); the driver is told once, when the function is looked up.
 */
export const KERNEL_MAX_SHARED: Partial<Record<KernelName, number>> = {
  ssd_fwd: 160 * 1024,
  ssd_bwd: 160 * 1024,
};

/** Steps between the SSD forward's state checkpoints (SSD_L in kernels/ssd.cu). */
export const SSD_CHUNK = 32;
/** The largest head dimension of the attention kernels (32·ATT_DL in kernels/attention.cu). */
export const ATTENTION_MAX_HEAD_DIM = 256;
/** Elements per partial sum of the gradient norm (SQ_BLOCK in kernels/optim.cu). */
export const SQ_BLOCK = 1024;
