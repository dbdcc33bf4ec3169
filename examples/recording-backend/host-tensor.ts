/*
 * The recording backend's tensors and memory: a tensor is a plain host array (Float32Array, or
 * Int32Array for token ids, targets and document indices) with a shape, and the fields the
 * shared tape reads (`TapeTensor`). Memory needs no management: a disposed block is only marked
 * (the garbage collector takes it), so the tape's memory operations are a few array loops. The
 * autograd is @loop/tensor's `deviceAutograd` over a `DeviceTape` of this memory: this backend
 * writes no tape and no backward walk.
 */
import {
  type AutogradDevice,
  type DeviceNode,
  DeviceTape,
  deviceAutograd,
  type TapeMemory,
  type TapeTensor,
} from "@loop/tensor/kernel";

let nextId = 0;

/** A tensor of the recording backend (see the file comment). */
export class HostTensor implements TapeTensor<HostTensor> {
  readonly id = nextId++;
  readonly shape: readonly number[];
  released = false;
  requiresGrad = false;
  node: DeviceNode<HostTensor> | null = null;
  grad: HostTensor | null = null;
  gradLive = false;

  constructor(
    readonly data: Float32Array | Int32Array,
    shape: readonly number[],
    readonly persistent = false,
    readonly base: HostTensor | null = null,
  ) {
    this.shape = [...shape];
    const n = this.shape.reduce((a, b) => a * b, 1);
    if (n !== data.length) throw new Error(`recording: ${data.length} values for shape [${shape}]`);
  }

  get size(): number {
    return this.data.length;
  }
}

/** A float tensor of zeros shaped like `like`. */
const zerosLike = (like: HostTensor, persistent = false) =>
  new HostTensor(new Float32Array(like.size), like.shape, persistent);

/** What the shared tape's walk asks of this memory (`TapeMemory`). */
const memory: TapeMemory<HostTensor> = {
  nextId: () => nextId,
  empty: zerosLike,
  copyInto: (dst, src) => dst.data.set(src.data),
  addInto(dst, src) {
    for (let i = 0; i < dst.size; i++) dst.data[i]! += src.data[i]!;
  },
  add(a, b) {
    const out = zerosLike(a);
    for (let i = 0; i < a.size; i++) out.data[i] = a.data[i]! + b.data[i]!;
    return out;
  },
  dispose(t) {
    t.released = true;
  },
  gathers: (t) => t.requiresGrad,
};

/** The backend's tape: its kernels record their nodes here. */
export const tape = new DeviceTape(memory);

/** What `deviceAutograd` reads of this memory. */
const device: AutogradDevice<HostTensor> = {
  name: "recording",
  tape,
  scalar: (value) => new HostTensor(Float32Array.of(value), [1]),
  read: async (t) => Float32Array.from(t.data),
  // checkpointing's stand-in for its input: a view of the same array with no node
  standIn: (x) => new HostTensor(x.data, x.shape, false, x),
  walk: () => ({}),
  setTrainable(t, on) {
    t.requiresGrad = on;
  },
  freeGradsOnZero: true,
  clip: {
    keepNorm: (norm, into) => {
      const kept = into ?? zerosLike(norm, true);
      kept.data.set(norm.data);
      return kept;
    },
    scale(g, norm, maxNorm) {
      const n = norm.data[0]!;
      if (!Number.isFinite(n) || n <= maxNorm) return;
      const f = maxNorm / (n + 1e-6);
      for (let i = 0; i < g.size; i++) g.data[i]! *= f;
    },
    released: (g) => g.released,
  },
};

/** The backend's autograd: written once in @loop/tensor, run over this tape. */
export const autograd = deviceAutograd(device);
