/// <reference types="@webgpu/types" />
/*
 * Bind groups kept across dispatches and steps. A training step binds the same pooled buffers to
 * the same kernels every step (the pool hands them out in the same order), so a bind group made
 * once serves every later step: creating one per dispatch is CPU work a GPU step cannot hide.
 *
 * A group is keyed by its pipeline and the exact buffers it binds (the uniform arena with a
 * dynamic offset, so the parameters' slot is not part of the key). A group must never outlive a
 * buffer it binds: the pool calls `evict` before it destroys a buffer, and the context calls
 * `clear` when the device goes. Buffers returned to the pool are not destroyed and keep their
 * groups, which is what makes the next step's dispatches find them.
 */
import { getOrMake } from "./memo.js";

/** More groups than this and the cache starts again (bounds memory whatever the pattern). */
const MAX_GROUPS = 1 << 16;

export class BindGroupCache {
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;
  private readonly groups = new Map<string, GPUBindGroup>();
  /** The keys of the groups that bind each buffer (by id), for eviction. */
  private readonly byBuffer = new Map<number, string[]>();

  /** A stable small number for a pipeline or buffer (the key's parts). */
  private id(o: object): number {
    return getOrMake(this.ids, o, () => this.nextId++);
  }

  /**
   * The group binding `uniform` (binding 0, `uniformSize` bytes from offset 0, dynamic offset)
   * and `buffers` (bindings 1…) for `pipeline`; `created` says whether it was made now.
   */
  get(
    device: GPUDevice,
    pipeline: GPUComputePipeline,
    layout: GPUBindGroupLayout,
    uniform: GPUBuffer,
    uniformSize: number,
    buffers: readonly GPUBuffer[],
  ): { group: GPUBindGroup; created: boolean } {
    const bufIds = buffers.map((b) => this.id(b));
    const key = `${this.id(pipeline)}|${this.id(uniform)}|${bufIds.join(",")}`;
    const hit = this.groups.get(key);
    if (hit) return { group: hit, created: false };
    if (this.groups.size >= MAX_GROUPS) this.clear();
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: uniform, offset: 0, size: uniformSize } },
    ];
    buffers.forEach((b, i) => {
      entries.push({ binding: i + 1, resource: { buffer: b } });
    });
    const group = device.createBindGroup({ layout, entries });
    this.groups.set(key, group);
    for (const id of new Set(bufIds)) getOrMake(this.byBuffer, id, () => []).push(key);
    return { group, created: true };
  }

  /** Forget every group that binds `buf` (call before destroying it). */
  evict(buf: GPUBuffer): void {
    const id = this.ids.get(buf);
    if (id === undefined) return;
    for (const key of this.byBuffer.get(id) ?? []) this.groups.delete(key);
    this.byBuffer.delete(id);
  }

  /** Groups held now. */
  get size(): number {
    return this.groups.size;
  }

  clear(): void {
    this.groups.clear();
    this.byBuffer.clear();
  }
}
