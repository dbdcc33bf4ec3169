/*
 * The contract's member lists (kernel-members.ts) are the types' members, no more and no less,
 * and the required set stays within 30 members.
 */
import { describe, expect, it } from "vitest";
import type { AutogradOps } from "./autograd-ops.js";
import type { KernelOps } from "./backend-ops.js";
import type { DecodeOps } from "./decode-ops.js";
import {
  AUTOGRAD_MEMBERS,
  KERNEL_OPS_MEMBERS,
  type OPTIONAL_KERNEL_OPS_MEMBERS,
} from "./kernel-members.js";

type Required<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type Optional<T> = Exclude<keyof T, Required<T>>;
type Same<A, B> = [Exclude<A, B>, Exclude<B, A>] extends [never, never] ? true : false;

type Ops = KernelOps<unknown, unknown>;
const required: Same<Required<Ops>, (typeof KERNEL_OPS_MEMBERS)[number]> = true;
const optional: Same<
  Optional<Ops> | keyof DecodeOps<unknown, unknown>,
  (typeof OPTIONAL_KERNEL_OPS_MEMBERS)[number]
> = true;
const autograd: Same<keyof AutogradOps<unknown>, (typeof AUTOGRAD_MEMBERS)[number]> = true;

describe("the contract's members as data", () => {
  it("match the types (checked when this file typechecks)", () => {
    expect([required, optional, autograd]).toEqual([true, true, true]);
  });

  it("a backend writes at most 30 required members, none of them autograd", () => {
    expect(KERNEL_OPS_MEMBERS.length).toBeLessThanOrEqual(30);
    expect(new Set(KERNEL_OPS_MEMBERS).size).toBe(KERNEL_OPS_MEMBERS.length);
    for (const m of AUTOGRAD_MEMBERS) expect(KERNEL_OPS_MEMBERS).not.toContain(m as never);
  });
});
