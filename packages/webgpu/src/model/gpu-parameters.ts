/**
 * A looped model's parameters on the device, by their docs/model.md §6 names: uploaded once from
 * a CPU `LoopedModel` (persistent, trainable leaves) and copied back into one (checkpoints,
 * evaluation on the CPU). The order is the CPU model's `parameters()` order.
 */
import type { LoopedModel } from "@loop/looped";
import type { GpuContext } from "../gpu-context.js";
import { type GpuTensor, gpuParameter } from "../gpu-tensor.js";
import type { GpuNamedParameter } from "../gpu-train-ops.js";

export class GpuParameters {
  readonly list: readonly GpuNamedParameter[];
  private readonly byName: Map<string, GpuNamedParameter>;

  constructor(list: GpuNamedParameter[]) {
    this.list = list;
    this.byName = new Map(list.map((p) => [p.name, p]));
  }

  static upload(ctx: GpuContext, model: LoopedModel): GpuParameters {
    return new GpuParameters(
      model.parameters().map((p) => ({
        name: p.name,
        tensor: gpuParameter(ctx, p.tensor.data, p.tensor.shape, p.name),
        decay: p.decay,
      })),
    );
  }

  /** The tensor named `name` (a programming error when absent: the names come from the config). */
  get(name: string): GpuTensor {
    const p = this.byName.get(name);
    if (!p) throw new Error(`webgpu model: no parameter named ${name}`);
    return p.tensor;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Check that `model` has exactly these parameters (names and shapes), naming the first mismatch. */
  checkMatches(model: LoopedModel, op: string): void {
    const cpu = model.parameters();
    const want = (ps: { name: string; tensor: { shape: readonly number[] } }[]) =>
      ps.map((p) => `${p.name}[${p.tensor.shape.join(",")}]`).join(" ");
    const got = want(cpu);
    const mine = want(this.list as GpuNamedParameter[]);
    if (got !== mine)
      throw new Error(`webgpu ${op}: the CPU model's parameters differ from the GPU model's`);
  }

  /** Every value back into `model`'s parameters (reads each tensor; waits for the GPU). */
  async copyTo(model: LoopedModel): Promise<void> {
    this.checkMatches(model, "copyTo");
    const cpu = model.parameters();
    for (let i = 0; i < cpu.length; i++) {
      const values = await this.list[i]!.tensor.read();
      cpu[i]!.tensor.data.set(values);
    }
  }

  /** Overwrite the device values with `model`'s (after a CPU-side change such as a resume). */
  copyFrom(model: LoopedModel): void {
    this.checkMatches(model, "copyFrom");
    model.parameters().forEach((p, i) => {
      this.list[i]!.tensor.write(p.tensor.data);
    });
  }

  dispose(): void {
    for (const p of this.list) p.tensor.dispose();
  }
}
