;; WebAssembly SIMD (simd128) single-precision GEMM on data already copied into linear memory:
;;   C = alpha · A · Bp + beta · C
;; A is read through element strides (A[i,k] at pA + 4·(i·rsA + k·csA)), so one kernel serves
;; both A and Aᵀ without packing; Bp is op(B) packed by $pack_b into column panels of NR = 8
;; floats (panel p holds columns 8p..8p+7 for every k, zero-padded); C is row-major with row
;; stride ldc floats. Compiled to packages/tensor/src/kernels/gemm.wasm.ts by
;; tools/wasm/build-wasm.ts (`pnpm exec tsx tools/wasm/build-wasm.ts`; the build-wasm test checks
;; the committed module matches); the JS driver is gemm-wasm.ts.
;;
;; Register blocking: a 4×8 tile of C lives in 8 f32x4 accumulators. V8 allocates 15 xmm
;; registers on x64; 8 accumulators + 2 B vectors + 1 broadcast A + 1 product temporary fit,
;; larger tiles (6×8, 4×12, 8×8) were measured to spill and run slower. No fused multiply-add
;; in simd128 (relaxed-simd needs a flag in Node 20), so each step is f32x4.mul then f32x4.add.
;; Bytes 0..127 of memory are the scratch tile for partial (edge) tiles.
(module
  (memory (export "memory") 1)

  ;; One 4×8 tile: acc = Σ_{k<kc} A[r,k]·Bp[k,0..7] for the four A row pointers a0..a3 (which
  ;; advance by csA bytes per k) and the packed panel pb (32 bytes per k); then
  ;; C[r,·] = alpha·acc + beta·C[r,·] with rows ldc bytes apart. beta == 0: C is not read.
  (func $tile
    (param $kc i32) (param $a0 i32) (param $a1 i32) (param $a2 i32) (param $a3 i32)
    (param $csA i32) (param $pb i32) (param $pc i32) (param $ldc i32)
    (param $alpha f32) (param $beta f32)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local $b0 v128) (local $b1 v128) (local $a v128) (local $va v128) (local $vb v128)
    (if (local.get $kc)
      (then
        (loop $k
          (local.set $b0 (v128.load (local.get $pb)))
          (local.set $b1 (v128.load offset=16 (local.get $pb)))
          (local.set $a (v128.load32_splat (local.get $a0)))
          (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $a) (local.get $b0))))
          (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $a) (local.get $b1))))
          (local.set $a (v128.load32_splat (local.get $a1)))
          (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $a) (local.get $b0))))
          (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $a) (local.get $b1))))
          (local.set $a (v128.load32_splat (local.get $a2)))
          (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $a) (local.get $b0))))
          (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $a) (local.get $b1))))
          (local.set $a (v128.load32_splat (local.get $a3)))
          (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $a) (local.get $b0))))
          (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $a) (local.get $b1))))
          (local.set $a0 (i32.add (local.get $a0) (local.get $csA)))
          (local.set $a1 (i32.add (local.get $a1) (local.get $csA)))
          (local.set $a2 (i32.add (local.get $a2) (local.get $csA)))
          (local.set $a3 (i32.add (local.get $a3) (local.get $csA)))
          (local.set $pb (i32.add (local.get $pb) (i32.const 32)))
          (br_if $k (local.tee $kc (i32.sub (local.get $kc) (i32.const 1)))))))
    (local.set $va (f32x4.splat (local.get $alpha)))
    (if (f32.eq (local.get $beta) (f32.const 0))
      (then
        (v128.store (local.get $pc) (f32x4.mul (local.get $c00) (local.get $va)))
        (v128.store offset=16 (local.get $pc) (f32x4.mul (local.get $c01) (local.get $va)))
        (local.set $pc (i32.add (local.get $pc) (local.get $ldc)))
        (v128.store (local.get $pc) (f32x4.mul (local.get $c10) (local.get $va)))
        (v128.store offset=16 (local.get $pc) (f32x4.mul (local.get $c11) (local.get $va)))
        (local.set $pc (i32.add (local.get $pc) (local.get $ldc)))
        (v128.store (local.get $pc) (f32x4.mul (local.get $c20) (local.get $va)))
        (v128.store offset=16 (local.get $pc) (f32x4.mul (local.get $c21) (local.get $va)))
        (local.set $pc (i32.add (local.get $pc) (local.get $ldc)))
        (v128.store (local.get $pc) (f32x4.mul (local.get $c30) (local.get $va)))
        (v128.store offset=16 (local.get $pc) (f32x4.mul (local.get $c31) (local.get $va))))
      (else
        (local.set $vb (f32x4.splat (local.get $beta)))
        (v128.store (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c00) (local.get $va))
            (f32x4.mul (v128.load (local.get $pc)) (local.get $vb))))
        (v128.store offset=16 (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c01) (local.get $va))
            (f32x4.mul (v128.load offset=16 (local.get $pc)) (local.get $vb))))
        (local.set $pc (i32.add (local.get $pc) (local.get $ldc)))
        (v128.store (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c10) (local.get $va))
            (f32x4.mul (v128.load (local.get $pc)) (local.get $vb))))
        (v128.store offset=16 (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c11) (local.get $va))
            (f32x4.mul (v128.load offset=16 (local.get $pc)) (local.get $vb))))
        (local.set $pc (i32.add (local.get $pc) (local.get $ldc)))
        (v128.store (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c20) (local.get $va))
            (f32x4.mul (v128.load (local.get $pc)) (local.get $vb))))
        (v128.store offset=16 (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c21) (local.get $va))
            (f32x4.mul (v128.load offset=16 (local.get $pc)) (local.get $vb))))
        (local.set $pc (i32.add (local.get $pc) (local.get $ldc)))
        (v128.store (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c30) (local.get $va))
            (f32x4.mul (v128.load (local.get $pc)) (local.get $vb))))
        (v128.store offset=16 (local.get $pc)
          (f32x4.add (f32x4.mul (local.get $c31) (local.get $va))
            (f32x4.mul (v128.load offset=16 (local.get $pc)) (local.get $vb)))))))

  ;; Edge tile: copy the top-left mr×nr of the scratch tile (at byte 0, rows 32 bytes apart,
  ;; already multiplied by alpha) into C: C = s + beta·C (beta == 0: C is not read).
  (func $merge (param $mr i32) (param $nr i32) (param $pc i32) (param $ldc i32) (param $beta f32)
    (local $i i32) (local $j i32) (local $s i32) (local $d i32)
    (loop $rows
      (local.set $j (i32.const 0))
      (local.set $s (i32.shl (local.get $i) (i32.const 5)))
      (local.set $d (i32.add (local.get $pc) (i32.mul (local.get $i) (local.get $ldc))))
      (loop $cols
        (if (f32.eq (local.get $beta) (f32.const 0))
          (then (f32.store (local.get $d) (f32.load (local.get $s))))
          (else
            (f32.store (local.get $d)
              (f32.add (f32.load (local.get $s))
                (f32.mul (local.get $beta) (f32.load (local.get $d)))))))
        (local.set $s (i32.add (local.get $s) (i32.const 4)))
        (local.set $d (i32.add (local.get $d) (i32.const 4)))
        (br_if $cols (i32.lt_u (local.tee $j (i32.add (local.get $j) (i32.const 1))) (local.get $nr))))
      (br_if $rows (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $mr)))))

  ;; Pack op(B) [K,N] from src (byte address, leading dimension ld floats; trans: src holds
  ;; B stored [N,K], so op(B)[k,j] = src[j·ld + k]) into dst as ceil(N/8) panels of K×8 floats.
  (func (export "pack_b")
    (param $src i32) (param $ld i32) (param $trans i32) (param $K i32) (param $N i32)
    (param $dst i32)
    (local $j0 i32) (local $nr i32) (local $k i32) (local $jj i32) (local $p i32) (local $ldb i32)
    (local.set $ldb (i32.shl (local.get $ld) (i32.const 2)))
    (block $end
      (loop $panels
        (br_if $end (i32.ge_u (local.get $j0) (local.get $N)))
        (local.set $nr (i32.sub (local.get $N) (local.get $j0)))
        (if (i32.gt_u (local.get $nr) (i32.const 8)) (then (local.set $nr (i32.const 8))))
        (local.set $k (i32.const 0))
        (if (i32.and (i32.eqz (local.get $trans)) (i32.eq (local.get $nr) (i32.const 8)))
          (then
            ;; full panel of row-major B: two vector copies per k
            (local.set $p (i32.add (local.get $src) (i32.shl (local.get $j0) (i32.const 2))))
            (block $kd
              (loop $kl
                (br_if $kd (i32.ge_u (local.get $k) (local.get $K)))
                (v128.store (local.get $dst) (v128.load (local.get $p)))
                (v128.store offset=16 (local.get $dst) (v128.load offset=16 (local.get $p)))
                (local.set $p (i32.add (local.get $p) (local.get $ldb)))
                (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $kl))))
          (else
            ;; transposed or partial panel: element by element, zero padding past N
            (block $kd2
              (loop $kl2
                (br_if $kd2 (i32.ge_u (local.get $k) (local.get $K)))
                (local.set $jj (i32.const 0))
                (loop $jl
                  (if (i32.lt_u (local.get $jj) (local.get $nr))
                    (then
                      (f32.store (local.get $dst)
                        (f32.load
                          (i32.add (local.get $src)
                            (i32.shl
                              (if (result i32) (local.get $trans)
                                (then
                                  (i32.add
                                    (i32.mul (i32.add (local.get $j0) (local.get $jj)) (local.get $ld))
                                    (local.get $k)))
                                (else
                                  (i32.add
                                    (i32.mul (local.get $k) (local.get $ld))
                                    (i32.add (local.get $j0) (local.get $jj)))))
                              (i32.const 2))))))
                    (else (f32.store (local.get $dst) (f32.const 0))))
                  (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
                  (br_if $jl (i32.lt_u (local.tee $jj (i32.add (local.get $jj) (i32.const 1))) (i32.const 8))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $kl2)))))
        (local.set $j0 (i32.add (local.get $j0) (i32.const 8)))
        (br $panels))))

  ;; C[M,N] = alpha · A[M,K] · Bp[K,N] + beta · C, cache-blocked: kcB columns of A / rows of Bp
  ;; per pass (panel slice stays in L1/L2), mcB rows × ncB columns of C per block. A[i,k] at
  ;; pA + 4·(i·rsA + k·csA); Bp packed by pack_b for the full K; C row stride ldc floats.
  (func (export "gemm")
    (param $M i32) (param $N i32) (param $K i32)
    (param $pA i32) (param $rsA i32) (param $csA i32) (param $pB i32)
    (param $pC i32) (param $ldc i32) (param $alpha f32) (param $beta f32)
    (param $kcB i32) (param $mcB i32) (param $ncB i32)
    (local $pc i32) (local $kc i32) (local $bet f32) (local $jc i32) (local $jend i32)
    (local $ic i32) (local $iend i32) (local $jr i32) (local $nr i32) (local $ir i32)
    (local $mr i32) (local $ldcB i32) (local $rsB i32) (local $csB i32) (local $pbp i32)
    (local $a0 i32) (local $r i32) (local $dst i32) (local $last i32)
    (local.set $ldcB (i32.shl (local.get $ldc) (i32.const 2)))
    (local.set $rsB (i32.shl (local.get $rsA) (i32.const 2)))
    (local.set $csB (i32.shl (local.get $csA) (i32.const 2)))
    (local.set $bet (local.get $beta))
    (loop $kloop
      (local.set $kc (i32.sub (local.get $K) (local.get $pc)))
      (if (i32.gt_u (local.get $kc) (local.get $kcB)) (then (local.set $kc (local.get $kcB))))
      (local.set $jc (i32.const 0))
      (loop $jloop
        (local.set $jend (i32.add (local.get $jc) (local.get $ncB)))
        (if (i32.gt_u (local.get $jend) (local.get $N)) (then (local.set $jend (local.get $N))))
        (local.set $ic (i32.const 0))
        (loop $iloop
          (local.set $iend (i32.add (local.get $ic) (local.get $mcB)))
          (if (i32.gt_u (local.get $iend) (local.get $M)) (then (local.set $iend (local.get $M))))
          (local.set $jr (local.get $jc))
          (loop $jrloop
            (local.set $nr (i32.sub (local.get $N) (local.get $jr)))
            (if (i32.gt_u (local.get $nr) (i32.const 8)) (then (local.set $nr (i32.const 8))))
            ;; panel jr/8, rows pc.. of the packed B
            (local.set $pbp
              (i32.add (local.get $pB)
                (i32.shl
                  (i32.add (i32.mul (local.get $jr) (local.get $K)) (i32.shl (local.get $pc) (i32.const 3)))
                  (i32.const 2))))
            (local.set $ir (local.get $ic))
            (loop $irloop
              (local.set $mr (i32.sub (local.get $M) (local.get $ir)))
              (if (i32.gt_u (local.get $mr) (i32.const 4)) (then (local.set $mr (i32.const 4))))
              (local.set $a0
                (i32.add (local.get $pA)
                  (i32.add (i32.mul (local.get $ir) (local.get $rsB))
                    (i32.mul (local.get $pc) (local.get $csB)))))
              ;; rows past M re-read the last valid row (results discarded) so reads stay in bounds
              (local.set $last (i32.add (local.get $a0)
                (i32.mul (i32.sub (local.get $mr) (i32.const 1)) (local.get $rsB))))
              (local.set $dst
                (i32.add (local.get $pC)
                  (i32.shl
                    (i32.add (i32.mul (local.get $ir) (local.get $ldc)) (local.get $jr))
                    (i32.const 2))))
              (if (i32.and (i32.eq (local.get $mr) (i32.const 4)) (i32.eq (local.get $nr) (i32.const 8)))
                (then
                  (call $tile (local.get $kc)
                    (local.get $a0)
                    (i32.add (local.get $a0) (local.get $rsB))
                    (i32.add (local.get $a0) (i32.shl (local.get $rsB) (i32.const 1)))
                    (i32.add (local.get $a0) (i32.mul (local.get $rsB) (i32.const 3)))
                    (local.get $csB) (local.get $pbp) (local.get $dst) (local.get $ldcB)
                    (local.get $alpha) (local.get $bet)))
                (else
                  (call $tile (local.get $kc)
                    (local.get $a0)
                    (select (i32.add (local.get $a0) (local.get $rsB)) (local.get $last)
                      (i32.gt_u (local.get $mr) (i32.const 1)))
                    (select (i32.add (local.get $a0) (i32.shl (local.get $rsB) (i32.const 1)))
                      (local.get $last) (i32.gt_u (local.get $mr) (i32.const 2)))
                    (local.get $last)
                    (local.get $csB) (local.get $pbp) (i32.const 0) (i32.const 32)
                    (local.get $alpha) (f32.const 0))
                  (call $merge (local.get $mr) (local.get $nr) (local.get $dst) (local.get $ldcB)
                    (local.get $bet))))
              (br_if $irloop
                (i32.lt_u (local.tee $ir (i32.add (local.get $ir) (i32.const 4))) (local.get $iend))))
            (br_if $jrloop
              (i32.lt_u (local.tee $jr (i32.add (local.get $jr) (i32.const 8))) (local.get $jend))))
          (br_if $iloop (i32.lt_u (local.tee $ic (local.get $iend)) (local.get $M))))
        (br_if $jloop (i32.lt_u (local.tee $jc (local.get $jend)) (local.get $N))))
      ;; later K slices accumulate onto the first
      (local.set $bet (f32.const 1))
      (br_if $kloop (i32.lt_u (local.tee $pc (i32.add (local.get $pc) (local.get $kcB))) (local.get $K))))))
