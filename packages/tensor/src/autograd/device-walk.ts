/*
 * The state of one backward walk of the device tape (device-tape.ts): the gradients it holds,
 * the blocks it owns and how many held gradients refer to each (so a block goes back once
 * nothing refers to it), and the nodes' order.
 */
import type { DeviceNode, TapeMemory, TapeTensor } from "./device-tape-types.js";

/** The walk running now: the gradients held, and how many of them refer to each block. */
export class Walk<T extends TapeTensor<T>> {
  readonly grads = new Map<T, T>();
  private readonly refs = new Map<T, number>();
  /** Blocks it may add into: made by the walk for one gradient, not passed through. */
  readonly owned = new Set<T>();
  /** Tensors with an id from here on were made by the walk. */
  readonly firstId: number;

  constructor(
    private readonly mem: TapeMemory<T>,
    readonly ends: ReadonlySet<T>,
    private readonly release: boolean,
  ) {
    this.firstId = mem.nextId();
  }

  /** The block of the walk's own `g` lives in (null: older than the walk, or persistent). */
  private block(g: T): T | null {
    const o = ownerOf(g);
    return !o.persistent && o.id >= this.firstId ? o : null;
  }

  hold(g: T): void {
    const o = this.block(g);
    if (o) this.refs.set(o, (this.refs.get(o) ?? 0) + 1);
  }

  drop(g: T): void {
    const o = this.block(g);
    if (!o) return;
    const n = (this.refs.get(o) ?? 0) - 1;
    if (n > 0) return void this.refs.set(o, n);
    this.refs.delete(o);
    this.owned.delete(o);
    if (this.release && !o.released) this.mem.dispose(o);
  }

  /** Whether `g` is a block of the walk's own that nothing but the tape's sum refers to. */
  sole(g: T): boolean {
    return this.owned.has(g) && this.refs.get(g) === 1 && !g.released;
  }
}

function ownerOf<T extends TapeTensor<T>>(t: T): T {
  let o = t;
  while (o.base) o = o.base;
  return o;
}

/** Whether `t` is a leaf whose gradient gathers in its `grad` (not one the walk ends at). */
export function isLeaf<T extends TapeTensor<T>>(t: T, ends: ReadonlySet<T>): boolean {
  return !t.node && !ends.has(t);
}

/** Nodes reached from `root`, producers before consumers. */
export function topoOrder<T extends TapeTensor<T>>(root: T): DeviceNode<T>[] {
  const order: DeviceNode<T>[] = [];
  const seen = new Set<DeviceNode<T>>();
  // iterative: a looped model's tape is deep (R loop steps × N layers × ops)
  const stack: [DeviceNode<T>, number][] = [];
  if (root.node) {
    seen.add(root.node);
    stack.push([root.node, 0]);
  }
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const [node, i] = top;
    if (i < node.inputs.length) {
      top[1] = i + 1;
      const child = node.inputs[i]!.node;
      if (child && !seen.has(child)) {
        seen.add(child);
        stack.push([child, 0]);
      }
    } else {
      stack.pop();
      order.push(node);
    }
  }
  return order;
}
