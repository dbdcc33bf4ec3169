/**
 * The in-page half of benchmarks/gpujs.bench.ts: plain JavaScript (a string, run in Chromium next
 * to gpu.js's browser bundle) that times one GEMM C[M,N] = A[M,K]·B[K,N] in float32 with
 *  - "wgsl": a simple tiled WGSL kernel (64×64 output tile per workgroup of 16×16 threads, 4×4
 *    outputs per thread, K in steps of 16 through workgroup memory), on navigator.gpu;
 *  - gpu.js in a given mode ("webgl2", "webgpu"): the textbook kernel of gpu.js's README,
 *    sum += a[y][k]·b[k][x].
 * Two figures each, medians of `reps` runs after `warmup`:
 *  - endToEndMs: upload A and B, multiply, read C back (what one call costs a caller);
 *  - residentMs: the marginal cost of one more multiply with the operands already on the GPU,
 *    (time of 5 chained multiplies + a read-back − time of 1 + a read-back) / 4.
 * maxErr: the largest |C − C_ref| / (1 + |C_ref|) over 64 sampled entries, C_ref in float64.
 */
export const GEMM_PAGE_SCRIPT = String.raw`
const WGSL = ${"`"}
struct P { M: u32, N: u32, K: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
var<workgroup> As: array<f32, 1024>;
var<workgroup> Bs: array<f32, 1024>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * 64u;
  let col0 = wg.x * 64u;
  let tid = lid.y * 16u + lid.x;
  var acc: array<f32, 16>;
  for (var i = 0u; i < 16u; i++) { acc[i] = 0.0; }
  for (var k0 = 0u; k0 < p.K; k0 += 16u) {
    for (var l = tid; l < 1024u; l += 256u) {
      let gr = row0 + l / 16u;
      let gk = k0 + l % 16u;
      As[l] = select(0.0, A[gr * p.K + gk], gr < p.M && gk < p.K);
      let gk2 = k0 + l / 64u;
      let gc = col0 + l % 64u;
      Bs[l] = select(0.0, B[gk2 * p.N + gc], gk2 < p.K && gc < p.N);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk++) {
      var a: array<f32, 4>;
      var b: array<f32, 4>;
      for (var i = 0u; i < 4u; i++) {
        a[i] = As[(lid.y * 4u + i) * 16u + kk];
        b[i] = Bs[kk * 64u + lid.x * 4u + i];
      }
      for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) { acc[i * 4u + j] += a[i] * b[j]; }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      let r = row0 + lid.y * 4u + i;
      let c = col0 + lid.x * 4u + j;
      if (r < p.M && c < p.N) { C[r * p.N + c] = acc[i * 4u + j]; }
    }
  }
}${"`"};

function rand(n, seed) {
  let s = seed >>> 0;
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 4294967296 - 0.5;
  }
  return a;
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}

async function timeMs(fn, warmup, reps) {
  for (let i = 0; i < warmup; i++) await fn();
  const t = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

function maxErr(get, A, B, M, K, N) {
  let worst = 0;
  for (let s = 0; s < 64; s++) {
    const i = (s * 7919) % M;
    const j = (s * 104729) % N;
    let ref = 0;
    for (let k = 0; k < K; k++) ref += A[i * K + k] * B[k * N + j];
    worst = Math.max(worst, Math.abs(get(i, j) - ref) / (1 + Math.abs(ref)));
  }
  return worst;
}

let gpuDevice = null;
async function device() {
  if (gpuDevice) return gpuDevice;
  const a = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!a) throw new Error("no WebGPU adapter");
  gpuDevice = await a.requestDevice({
    requiredLimits: {
      maxStorageBufferBindingSize: a.limits.maxStorageBufferBindingSize,
      maxBufferSize: a.limits.maxBufferSize,
    },
  });
  return gpuDevice;
}

async function wgslGemm(M, K, N, warmup, reps) {
  const dev = await device();
  const A = rand(M * K, 1);
  const B = rand(K * N, 2);
  const U = GPUBufferUsage;
  const buf = (bytes, usage) => dev.createBuffer({ size: bytes, usage });
  const a = buf(A.byteLength, U.STORAGE | U.COPY_DST);
  const b = buf(B.byteLength, U.STORAGE | U.COPY_DST);
  const c = buf(M * N * 4, U.STORAGE | U.COPY_SRC);
  const stage = buf(M * N * 4, U.MAP_READ | U.COPY_DST);
  const uni = buf(16, U.UNIFORM | U.COPY_DST);
  dev.queue.writeBuffer(uni, 0, new Uint32Array([M, N, K, 0]));
  const module = dev.createShaderModule({ code: WGSL });
  const pipe = dev.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
  const bind = dev.createBindGroup({
    layout: pipe.getBindGroupLayout(0),
    entries: [uni, a, b, c].map((buffer, i) => ({ binding: i, resource: { buffer } })),
  });
  let out = null;
  const run = async (times, upload) => {
    if (upload) {
      dev.queue.writeBuffer(a, 0, A);
      dev.queue.writeBuffer(b, 0, B);
    }
    const enc = dev.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipe);
    pass.setBindGroup(0, bind);
    for (let i = 0; i < times; i++) pass.dispatchWorkgroups(Math.ceil(N / 64), Math.ceil(M / 64));
    pass.end();
    enc.copyBufferToBuffer(c, 0, stage, 0, M * N * 4);
    dev.queue.submit([enc.finish()]);
    await stage.mapAsync(GPUMapMode.READ);
    out = new Float32Array(stage.getMappedRange().slice(0));
    stage.unmap();
  };
  await run(1, true);
  const err = maxErr((i, j) => out[i * N + j], A, B, M, K, N);
  const endToEndMs = await timeMs(() => run(1, true), warmup, reps);
  const one = await timeMs(() => run(1, false), warmup, reps);
  const five = await timeMs(() => run(5, false), warmup, reps);
  for (const x of [a, b, c, stage, uni]) x.destroy();
  return { endToEndMs, residentMs: (five - one) / 4, maxErr: err };
}

async function gpujsGemm(mode, M, K, N, warmup, reps) {
  const gpu = new GPU({ mode });
  try {
    const A = rand(M * K, 1);
    const B = rand(K * N, 2);
    const body = function (a, b) {
      let sum = 0;
      for (let k = 0; k < this.constants.K; k++) sum += a[this.thread.y][k] * b[k][this.thread.x];
      return sum;
    };
    const opts = { output: [N, M], constants: { K }, loopMaxIterations: K + 1 };
    const mul = gpu.createKernel(body, opts);
    const ia = GPU.input(A, [K, M]);
    const ib = GPU.input(B, [N, K]);
    let out = null;
    const e2e = async () => {
      out = await mul(ia, ib);
    };
    await e2e();
    if (out.length !== M || out[0].length !== N) throw new Error("gpu.js returned a result of the wrong shape");
    const err = maxErr((i, j) => out[i][j], A, B, M, K, N);
    const endToEndMs = await timeMs(e2e, warmup, reps);
    // Resident operands: textures made once by pipeline copies; the product stays a texture until
    // one read-back at the end.
    let residentMs = null;
    let residentNote = "";
    try {
      const copyA = gpu.createKernel(function (x) { return x[this.thread.y][this.thread.x]; }, { output: [K, M], pipeline: true });
      const copyB = gpu.createKernel(function (x) { return x[this.thread.y][this.thread.x]; }, { output: [N, K], pipeline: true });
      const ta = await copyA(ia);
      const tb = await copyB(ib);
      const mulP = gpu.createKernel(body, { ...opts, pipeline: true, immutable: true });
      const chain = async (times) => {
        let r = null;
        for (let i = 0; i < times; i++) {
          if (r && r.delete) r.delete();
          r = await mulP(ta, tb);
        }
        const arr = await r.toArray();
        if (r.delete) r.delete();
        return arr;
      };
      const one = await timeMs(() => chain(1), warmup, reps);
      const five = await timeMs(() => chain(5), warmup, reps);
      residentMs = (five - one) / 4;
    } catch (e) {
      residentNote = "resident: " + String(e && e.message ? e.message : e).split("\n")[0];
    }
    return { endToEndMs, residentMs, maxErr: err, note: residentNote };
  } finally {
    gpu.destroy();
  }
}

window.gemmBench = async (impl, M, K, N, warmup, reps) =>
  impl === "wgsl" ? wgslGemm(M, K, N, warmup, reps) : gpujsGemm(impl, M, K, N, warmup, reps);

window.gpuInfo = async () => {
  const a = navigator.gpu ? await navigator.gpu.requestAdapter() : null;
  const gl = document.createElement("canvas").getContext("webgl2");
  const dbg = gl && gl.getExtension("WEBGL_debug_renderer_info");
  return {
    webgpu: a ? [a.info.vendor, a.info.architecture, a.info.device, a.info.description].filter((s) => s).join(" ") : null,
    webgl: gl ? String(gl.getParameter(dbg ? dbg.UNMASKED_RENDERER_WEBGL : gl.RENDERER)) : null,
  };
};
`;
