/*
 * The uniform arenas that carry each dispatch's scalar parameters: slots of 256-byte-aligned
 * parameter blocks packed into 64 KiB uniform buffers, filled on the CPU while commands are
 * recorded and written to the GPU once, just before the submit (`upload`). After a submit the
 * arenas are refilled from the first: a step that records the same dispatches as the previous
 * one puts each in the same arena, so its bind group (keyed by the arena, the slot being a
 * dynamic offset) is the one made then.
 */
import type { Kernel } from "./kernel-def.js";
import { BufferUsage } from "./usage.js";

/** Uniform offsets must be multiples of this (WebGPU's minUniformBufferOffsetAlignment). */
const UNIFORM_ALIGN = 256;
const ARENA_BYTES = 256 * UNIFORM_ALIGN;

export interface Arena {
  gpu: GPUBuffer;
  cpu: ArrayBuffer;
  used: number;
}

/** Bytes of a kernel's parameter block (a uniform struct of 4-byte scalars, 16-byte aligned). */
export function uniformBytes(kernel: Kernel): number {
  return Math.max(16, Math.ceil((kernel.paramNames.length * 4) / 16) * 16);
}

export class UniformArenas {
  private readonly arenas: Arena[] = [];
  /** Arenas in use by the commands being recorded (a prefix of `arenas`). */
  private used = 0;

  constructor(private readonly device: GPUDevice) {}

  /** The arena and offset of a new slot of `bytes` holding `kernel`'s `params`. */
  slot(
    kernel: Kernel,
    bytes: number,
    params: Record<string, number>,
  ): { arena: Arena; offset: number } {
    let arena = this.arenas[this.used - 1];
    if (!arena || arena.used + bytes > ARENA_BYTES) {
      arena = this.arenas[this.used];
      if (!arena) {
        arena = {
          gpu: this.device.createBuffer({
            size: ARENA_BYTES,
            usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST,
          }),
          cpu: new ArrayBuffer(ARENA_BYTES),
          used: 0,
        };
        this.arenas.push(arena);
      }
      arena.used = 0;
      this.used++;
    }
    const offset = arena.used;
    const view = new DataView(arena.cpu, offset, bytes);
    kernel.paramNames.forEach((name, i) => {
      const v = params[name];
      if (v === undefined || !Number.isFinite(v))
        throw new Error(`webgpu: kernel ${kernel.name} needs a finite parameter "${name}"`);
      const t = kernel.paramTypes[i];
      if (t === "f32") view.setFloat32(i * 4, v, true);
      else if (t === "i32") view.setInt32(i * 4, v, true);
      else view.setUint32(i * 4, v, true);
    });
    arena.used += Math.ceil(bytes / UNIFORM_ALIGN) * UNIFORM_ALIGN;
    return { arena, offset };
  }

  /**
   * Write the slots filled since the last submit to the GPU (queued before the submit that
   * follows), then start again from the first arena: the queue orders the next step's writes
   * after this submit's commands.
   */
  upload(): void {
    for (let i = 0; i < this.used; i++) {
      const a = this.arenas[i]!;
      this.device.queue.writeBuffer(a.gpu, 0, a.cpu, 0, a.used);
      a.used = 0;
    }
    this.used = 0;
  }
}
