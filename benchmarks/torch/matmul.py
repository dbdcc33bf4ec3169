"""PyTorch reference for benchmarks/matmul.bench.ts: C = A @ B (float32) for each shape and
thread count; prints one JSON line {"torch", "blas", "results": [{M, K, N, threads, ms, cpu_ms}]}
with the medians of wall time and process CPU time of the timed runs (after warm-up), like the
TypeScript side."""
import argparse
import glob
import json
import os
import re
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--shapes", required=True, help="MxKxN,MxKxN,...")
p.add_argument("--threads", default="1,2")
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--repeats", type=int, default=9)
a = p.parse_args()

torch.manual_seed(0)
results = []
for threads in [int(t) for t in a.threads.split(",")]:
    torch.set_num_threads(threads)
    for shape in a.shapes.split(","):
        M, K, N = (int(x) for x in shape.split("x"))
        A = torch.randn(M, K)
        B = torch.randn(K, N)
        C = torch.empty(M, N)
        for _ in range(a.warmup):
            torch.matmul(A, B, out=C)
        samples = []
        cpu = []
        for _ in range(a.repeats):
            c0 = time.process_time()
            t0 = time.perf_counter()
            torch.matmul(A, B, out=C)
            samples.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        results.append(
            {
                "M": M,
                "K": K,
                "N": N,
                "threads": threads,
                "ms": statistics.median(samples),
                "cpu_ms": statistics.median(cpu),
            }
        )

m = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
blas = f"BLAS_INFO={m.group(1)}" if m else "unknown BLAS"
# Debian's "generic" BLAS is whatever libblas.so.3 points to (OpenBLAS with libopenblas0-openmp)
lib = glob.glob("/usr/lib/*/libblas.so.3")
if lib:
    blas += f" → {os.path.realpath(lib[0])}"
print(json.dumps({"torch": torch.__version__, "blas": blas, "results": results}))
