/// <reference types="@webgpu/types" />
/*
 * One WebGPU device and everything that keeps a training step on it: compiled pipelines (cached
 * per kernel), a pool of storage buffers reused across steps, one command encoder that collects
 * every dispatch until something must be read back, and a uniform arena that carries each
 * dispatch's parameters (written once, just before the encoder is submitted).
 *
 * Nothing here waits for the GPU except `read`: a step enqueues all of its work and reads the
 * loss back once.
 */
import { BindGroupCache } from "./bind-group-cache.js";
import { BufferPool } from "./buffer-pool.js";
import { type Compiled, compileKernel } from "./compile-kernel.js";
import { type GpuCounters, type GpuEvent, type GpuMemory, zeroCounters } from "./gpu-counters.js";
import { GpuTensor } from "./gpu-tensor.js";
import type { Kernel } from "./kernel-def.js";
import { getOrMake } from "./memo.js";
import { UniformArenas } from "./uniform-arenas.js";
import { BufferUsage, MapMode } from "./usage.js";

/** A dispatch's storage buffers by the names its kernel declares; a tensor binds its `buffer`. */
export type Bindings = Record<string, GPUBuffer | GpuTensor>;

/** How a `GpuContext` labels and keeps alive what its device needs. */
export interface GpuContextOptions {
  /** Label for error messages ("SwiftShader", the adapter's description). */
  adapterName?: string;
  /**
   * Objects the device depends on that must live as long as it (Node's Dawn binding destroys its
   * instance, and every device made from it, when the `GPU` object is garbage-collected).
   */
  keepAlive?: unknown[];
  /**
   * The adapter's smallest subgroup size when the device has the `subgroups` feature: kernels
   * with a subgroup variant (Kernel.subgroupCode) then use it (see `subgroupReductions`).
   */
  subgroupMinSize?: number;
  /** What the adapter offers (for reports): its optional features and subgroup-matrix shapes. */
  adapter?: AdapterOffer;
}

/** What an adapter offers beyond the core: its optional features, its subgroup-matrix configs. */
export interface AdapterOffer {
  /** The adapter's optional features, sorted. */
  features: string[];
  /** Its subgroup-matrix configurations (M×N×K, component and result types), where it has any. */
  subgroupMatrixConfigs: string[];
}

/**
 * A WebGPU device with what the kernels need around it: compiled pipelines, cached bind groups, the
 * open command encoder, buffer pools and counters.
 */
export class GpuContext {
  /** The WebGPU device. */
  readonly device: GPUDevice;
  /** The adapter's name, for messages ("SwiftShader", a GPU's description). */
  readonly adapterName: string;
  private readonly keepAlive: unknown[];
  private readonly pipelines = new Map<Kernel, Compiled>();
  private readonly bindGroups = new BindGroupCache();
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  /** Each dispatch's parameters, uploaded at the submit (uniform-arenas.ts). */
  private readonly uniforms: UniformArenas;
  private lost: string | null = null;
  /** The first kernel that failed to compile (reported by the next read or sync). */
  private failure: string | null = null;
  private pending: Promise<void>[] = [];
  private tally: GpuCounters = zeroCounters();
  private readonly pool: BufferPool;
  /**
   * Called at each submit and when each read's data has arrived (in that order of events): what
   * a test needs to see that a step is queued while the previous one's read is pending.
   */
  onEvent: ((event: GpuEvent) => void) | null = null;
  /** The adapter's smallest subgroup size, when the device has subgroups (else null). */
  readonly subgroupMinSize: number | null;
  /** What the adapter offers (empty lists where the context was made without it). */
  readonly adapter: AdapterOffer;
  private subgroups: boolean;

  constructor(device: GPUDevice, opts: GpuContextOptions = {}) {
    this.device = device;
    this.adapterName = opts.adapterName ?? "WebGPU adapter";
    this.adapter = opts.adapter ?? { features: [], subgroupMatrixConfigs: [] };
    this.keepAlive = opts.keepAlive ?? [];
    this.pool = new BufferPool(device);
    this.uniforms = new UniformArenas(device);
    const min = opts.subgroupMinSize;
    this.subgroupMinSize =
      min !== undefined && min >= 2 && Number.isInteger(Math.log2(min)) ? min : null;
    this.subgroups = this.subgroupMinSize !== null;
    device.lost.then((info) => {
      this.lost = info.message || info.reason || "device lost";
    });
  }

  /**
   * Whether kernels with a subgroup variant run it (default: where the device has subgroups).
   * The variants give the same bits; turning them off (tests of the plain path on a device that
   * has subgroups) recompiles the kernels on their next use.
   */
  get subgroupReductions(): boolean {
    return this.subgroups;
  }

  set subgroupReductions(on: boolean) {
    if (on && this.subgroupMinSize === null)
      throw new Error(`webgpu: ${this.adapterName} has no subgroups`);
    if (on === this.subgroups) return;
    this.subgroups = on;
    this.pipelines.clear();
    this.bindGroups.clear();
  }

  // --- Counters ---------------------------------------------------------------------------------

  /** A copy of the counters (dispatches, encoding time, bind groups, pipelines, submits). */
  counters(): GpuCounters {
    return { ...this.tally, byKernel: { ...this.tally.byKernel } };
  }

  /** Start the counters again from zero. */
  resetCounters(): void {
    this.tally = zeroCounters();
  }

  /** Bind groups the cache holds now. */
  get cachedBindGroups(): number {
    return this.bindGroups.size;
  }

  // --- Memory -----------------------------------------------------------------------------------

  /** Bytes currently allocated on the device by the pool (live + free). */
  get poolBytes(): number {
    return this.pool.bytes;
  }

  /**
   * Device memory of the pool: `liveBytes` handed out now, `peakBytes` the most live at once since
   * the context was made or `resetPeak` was called (a step's peak: reset before it, read after),
   * `poolBytes` allocated in all (live + free). Counted in the pool's size classes, so the same
   * work gives the same figures on every adapter.
   */
  memory(): GpuMemory {
    return this.pool.memory();
  }

  /** Start the high-water mark again from the bytes live now. */
  resetPeak(): void {
    this.pool.resetPeak();
  }

  // --- Buffers ----------------------------------------------------------------------------------

  /** A storage buffer of at least `bytes` bytes from the pool (contents unspecified). */
  allocBytes(bytes: number): GPUBuffer {
    this.checkAlive();
    return this.pool.alloc(bytes);
  }

  /** Return a buffer from `allocBytes` to the pool. The caller must not use it afterwards. */
  release(buf: GPUBuffer): void {
    this.pool.release(buf);
  }

  /** Destroy the pool's free buffers (live ones stay). */
  trimPool(): void {
    // no cached bind group may outlive the buffer it binds
    this.pool.trim((b) => this.bindGroups.evict(b));
  }

  /** Copy `data` into `buf` at `byteOffset` (queued before the next submit's commands). */
  write(buf: GPUBuffer, data: ArrayBufferView, byteOffset = 0): void {
    this.checkAlive();
    // Commands already recorded must see the buffer's old contents: submit them first.
    if (this.encoder) this.flush();
    // writeBuffer rejects views of a SharedArrayBuffer (CPU tensors may live in one when the
    // engine runs worker threads): copy those into a plain buffer first.
    const src =
      data.buffer instanceof ArrayBuffer
        ? data
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
    this.device.queue.writeBuffer(
      buf,
      byteOffset,
      src.buffer as ArrayBuffer,
      src.byteOffset,
      src.byteLength,
    );
  }

  // --- Dispatch ---------------------------------------------------------------------------------

  private pipeline(kernel: Kernel): Compiled {
    return getOrMake(this.pipelines, kernel, () => {
      const { compiled, checked } = compileKernel(
        this.device,
        kernel,
        this.subgroups ? this.subgroupMinSize : null,
      );
      this.tally.pipelinesCreated++;
      this.pending.push(
        checked.then((failure) => {
          // Forget the invalid pipeline: its next use compiles again and is reported again.
          if (failure) this.pipelines.delete(kernel);
          if (failure && this.failure === null) this.failure = failure;
        }),
      );
      return compiled;
    });
  }

  /**
   * Enqueue one dispatch of `kernel` with its buffers (Bindings) and scalar parameters, over
   * `workgroups` [x, y, z]. Nothing runs until the next flush.
   */
  run(
    kernel: Kernel,
    buffers: Bindings,
    params: Record<string, number>,
    workgroups: readonly [number, number, number] | readonly [number, number] | readonly [number],
  ): void {
    // Tensors' buffers are taken in the order given, before anything else: one left as partial
    // sums enqueues their sum here (GpuTensor.buffer), ahead of this dispatch.
    const bufs: Record<string, GPUBuffer> = {};
    for (const name in buffers) {
      const b = buffers[name]!;
      bufs[name] = b instanceof GpuTensor ? b.buffer : b;
    }
    const start = performance.now();
    this.checkAlive();
    const compiled = this.pipeline(kernel);
    const bound = kernel.bufferNames.map((name) => {
      const b = bufs[name];
      if (!b) throw new Error(`webgpu: kernel ${kernel.name} needs buffer "${name}"`);
      return b;
    });
    const slot = this.uniforms.slot(kernel, compiled.uniformBytes, params);
    const { group, created } = this.bindGroups.get(
      this.device,
      compiled.pipeline,
      compiled.layout,
      slot.arena.gpu,
      compiled.uniformBytes,
      bound,
    );
    const pass = this.computePass();
    pass.setPipeline(compiled.pipeline);
    pass.setBindGroup(0, group, [slot.offset]);
    const [x, y = 1, z = 1] = workgroups;
    if (x > 0 && y > 0 && z > 0) pass.dispatchWorkgroups(x, y, z);
    const t = this.tally;
    t.dispatches++;
    t.byKernel[kernel.name] = (t.byKernel[kernel.name] ?? 0) + 1;
    if (created) t.bindGroupsCreated++;
    t.encodeMs += performance.now() - start;
  }

  private computePass(): GPUComputePassEncoder {
    if (!this.pass) {
      this.encoder ??= this.device.createCommandEncoder();
      this.pass = this.encoder.beginComputePass();
    }
    return this.pass;
  }

  private commandEncoder(): GPUCommandEncoder {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    this.encoder ??= this.device.createCommandEncoder();
    return this.encoder;
  }

  /** Enqueue a copy of `bytes` bytes between storage buffers. */
  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    this.checkAlive();
    if (bytes > 0) this.commandEncoder().copyBufferToBuffer(src, srcOffset, dst, dstOffset, bytes);
  }

  /** Submit everything enqueued so far (uniforms first). */
  flush(): void {
    if (!this.encoder) return;
    const enc = this.commandEncoder();
    this.uniforms.upload();
    this.device.queue.submit([enc.finish()]);
    this.tally.submits++;
    this.onEvent?.("submit");
    this.encoder = null;
  }

  /** Read `count` 4-byte elements of `buf` back to the CPU (flushes; waits for the GPU). */
  async read(buf: GPUBuffer, count: number, byteOffset = 0): Promise<ArrayBuffer> {
    const bytes = count * 4;
    const staging = this.device.createBuffer({
      size: Math.max(4, Math.ceil(bytes / 4) * 4),
      usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST,
    });
    this.copy(buf, byteOffset, staging, 0, bytes);
    this.flush();
    try {
      await staging.mapAsync(MapMode.READ);
    } catch (e) {
      this.checkAlive();
      throw e;
    }
    const out = staging.getMappedRange().slice(0, bytes);
    staging.unmap();
    staging.destroy();
    this.onEvent?.("read-done");
    await this.checkCompiled();
    return out;
  }

  /** Wait until the GPU has finished everything submitted (flushes first). */
  async sync(): Promise<void> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    this.checkAlive();
    await this.checkCompiled();
  }

  /** Throw when a kernel used so far failed to compile. */
  private async checkCompiled(): Promise<void> {
    if (this.pending.length) {
      const pending = this.pending;
      this.pending = [];
      await Promise.all(pending);
    }
    if (this.failure !== null) {
      const failure = this.failure;
      this.failure = null; // reported once; the kernel's next use is compiled and checked again
      throw new Error(`webgpu: ${failure}`);
    }
  }

  private checkAlive(): void {
    if (this.lost !== null) throw new Error(`webgpu: the device was lost (${this.lost})`);
  }

  /** Release the device. The context cannot be used afterwards. */
  destroy(): void {
    this.trimPool();
    this.bindGroups.clear();
    this.device.destroy();
    this.lost = "destroyed";
  }
}
