import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packArgs } from "./device.js";
import { KERNEL_FILES, KERNELS } from "./kernel-table.js";
import { KERNEL_DIR } from "./node/compile-kernels.js";

/** name → parameter letters, read from the CUDA declarations. */
function declared(): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of KERNEL_FILES) {
    const src = readFileSync(join(KERNEL_DIR, f), "utf8");
    for (const m of src.matchAll(/KERNEL void (?:__launch_bounds__\(\d+\)\s*)?(\w+)\(([^)]*)\)/g)) {
      const sig = m[2]!
        .split(",")
        .map((p) => p.trim())
        .map((p) =>
          p.includes("*")
            ? "p"
            : p.startsWith("long long")
              ? "l"
              : p.startsWith("int")
                ? "i"
                : p.startsWith("float")
                  ? "f"
                  : `?${p}`,
        )
        .join("");
      out.set(m[1]!, sig);
    }
  }
  return out;
}

describe("the kernel table", () => {
  it("lists every CUDA kernel with the parameters of its declaration", () => {
    expect(Object.fromEntries(declared())).toEqual(KERNELS);
  });

  it("packs 8 bytes per parameter and refuses arguments that do not fit", () => {
    const p = packArgs("fill", [3, 1.5, 4096]);
    const v = new DataView(p.buffer);
    expect(p.length).toBe(24);
    expect(v.getBigInt64(0, true)).toBe(3n);
    expect(v.getFloat32(8, true)).toBe(1.5);
    expect(v.getBigUint64(16, true)).toBe(4096n);
    expect(() => packArgs("fill", [3, 1.5])).toThrow("fill takes 3 arguments, got 2");
    expect(() => packArgs("rmsnorm_fwd", [2.5, 1e-5, 1, 2, 3, 4])).toThrow(
      "argument 0 (int32) is 2.5",
    );
    expect(() => packArgs("fill", [3, 1, -8])).toThrow("argument 2 (pointer) is -8");
  });
});
