/*
 * Chunked SSD scan, backward (the forward and its notation: kernels/ssd-chunked.ts). With gY the
 * output gradient and R_c = ∂L/∂S_end of chunk c (the final-state gradient for the last chunk):
 *   chunkOuter (mode 1)  Q_c = Σ_i E_i·gY_iᵀ ⊗ C_i: the state gradient the chunk's outputs send back
 *   reversePass  one workgroup per (b, h), chunks last to first: R_{c−1} = Ec·R_c + Q_c; the
 *                initial-state gradient is Ec_0·R_0 + Q_0; ∂Λ_{L−1} gets Ec·Σ R_c ⊙ S_prev
 *   intraGrad    per (b, c, h): dM = gY·Xᵀ (lower triangle), d(CBᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j
 *                per head; the Λ and dt sums of the intra block (every term f·exp(Λ_i − Λ_j)
 *                sends ∂f to Λ_i and −∂f to Λ_j)
 *   gradX        ∂X = Mᵀ·gY + diag(w)·B·R_cᵀ (+ D_h·gY)
 *   rowsByState  vB = X·R_c, uC = gY·S_prev  (per head, [B,T,H,N]; scaled by w, E next)
 *   finish       per (b, c, h) a thread per position: ∂B_h = w ⊙ vB, ∂C_h = E ⊙ uC, their Λ and
 *                dt terms, then the reverse cumulative sum da_k = Σ_{i ≥ k} ∂Λ_i (a parallel
 *                suffix sum in workgroup memory)
 *   groupGrad    per (b, c, g): ∂B = Σ_h ∂B_h + d(CBᵀ)ᵀ·C,  ∂C = Σ_h ∂C_h + d(CBᵀ)·B (summed heads)
 *   dtGrad       ∂dt = ddt + A_h·da;  ∂A_h = Σ dt·da and ∂D_h = Σ gY ⊙ X are column sums.
 * Independent passes share a dispatch, their workgroups told apart by index: chunkOuter (mode 1)
 * with rowsByState's uC (ssdOuterRows), dtGrad with the first stages of the ∂A and ∂D sums.
 * Reductions run in a fixed order in workgroup memory (no atomics): deterministic.
 * The kernels live by pass group: ssd-chunked-backward-states.ts (chunkOuter, reversePass,
 * rowsByState: the state gradient across chunks), ssd-chunked-backward-intra.ts (intraGrad,
 * gradX: inside a chunk), ssd-chunked-backward-finish.ts (finish, groupGrad, dtGrad: the inputs'
 * gradients).
 */
export {
  ssdDtGradKernel,
  ssdFinishKernel,
  ssdGroupGradKernel,
} from "./ssd-chunked-backward-finish.js";
export { ssdGradXKernel, ssdIntraGradKernel } from "./ssd-chunked-backward-intra.js";
export {
  ssdOuterRowsKernel,
  ssdReversePassKernel,
  ssdRowsByStateKernel,
} from "./ssd-chunked-backward-states.js";
