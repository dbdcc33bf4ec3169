import { describe, expect, it } from "vitest";
import { fatbinContents, fatbinCovers } from "./fatbin.js";

/** A fatbin's bytes: the header, then one entry per [kind, arch, payload bytes]. */
function fatbin(entries: [1 | 2, number, number][]): Uint8Array {
  const parts = entries.map(([kind, arch, n]) => {
    const e = new Uint8Array(64 + n);
    const v = new DataView(e.buffer);
    v.setUint16(0, kind, true);
    v.setUint16(2, 0x101, true);
    v.setUint32(4, 64, true);
    v.setBigUint64(8, BigInt(n), true);
    v.setUint32(28, arch, true);
    return e;
  });
  const size = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(16 + size);
  const v = new DataView(out.buffer);
  v.setUint32(0, 0xba55ed50, true);
  v.setUint16(4, 1, true);
  v.setUint16(6, 16, true);
  v.setBigUint64(8, BigInt(size), true);
  let at = 16;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("fatbinContents", () => {
  const image = fatbin([
    [2, 80, 100],
    [2, 86, 7],
    [2, 89, 0],
    [2, 90, 33],
    [1, 90, 12],
  ]);

  it("lists the cubins' and the PTX's architectures", () => {
    expect(fatbinContents(image)).toEqual({
      sass: ["sm_80", "sm_86", "sm_89", "sm_90"],
      ptx: ["compute_90"],
    });
  });

  it("refuses what is not a fatbin, and a truncated one", () => {
    expect(() => fatbinContents(new Uint8Array(64))).toThrow("not a CUDA fatbin");
    expect(() => fatbinContents(image.subarray(0, 100))).toThrow("truncated");
  });

  it("says how each GPU runs it: its own cubin, an older minor's, or the PTX", () => {
    const c = fatbinContents(image);
    expect(fatbinCovers(c, "sm_90")).toBe("sm_90 code");
    expect(fatbinCovers(c, "sm_87")).toBe("sm_86 code (runs on sm_87)");
    expect(fatbinCovers(c, "sm_120")).toBe("compute_90 PTX, compiled by the driver for sm_120");
    expect(fatbinCovers(c, "sm_75")).toBeNull();
  });
});
