import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSafetensorsFile, writeSafetensorsFile } from "../node/files.js";
import { decodeSafetensors, encodeSafetensors } from "./safetensors.js";

function raw(header: unknown, data: Uint8Array, lenOverride?: number): Uint8Array {
  const h = new TextEncoder().encode(typeof header === "string" ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(lenOverride ?? h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

describe("safetensors", () => {
  it("round-trips F32 with metadata and aligned header", () => {
    const bytes = encodeSafetensors(
      {
        b: { data: Float32Array.of(1, 2, 3, 4, 5, 6), shape: [2, 3] },
        a: { data: Float32Array.of(-1.5), shape: [1] },
      },
      { format: "pt" },
    );
    const hlen = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect((8 + hlen) % 8).toBe(0);
    const f = decodeSafetensors(bytes);
    expect(f.metadata).toEqual({ format: "pt" });
    expect([...f.tensors.keys()].sort()).toEqual(["a", "b"]);
    expect(Array.from(f.tensors.get("b")!.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(f.tensors.get("b")!.shape).toEqual([2, 3]);
  });
  it("widens F16 and BF16", () => {
    const d = new Uint8Array(8);
    const v = new DataView(d.buffer);
    v.setUint16(0, 0x3c00, true); // f16 1.0
    v.setUint16(2, 0xc000, true); // f16 -2.0
    v.setUint16(4, 0x3fc0, true); // bf16 1.5
    v.setUint16(6, 0x0001, true); // f16 smallest subnormal (as F16 below)
    const f = decodeSafetensors(
      raw(
        {
          h: { dtype: "F16", shape: [2], data_offsets: [0, 4] },
          b: { dtype: "BF16", shape: [1], data_offsets: [4, 6] },
          s: { dtype: "F16", shape: [1], data_offsets: [6, 8] },
        },
        d,
      ),
    );
    expect(Array.from(f.tensors.get("h")!.data)).toEqual([1, -2]);
    expect(f.tensors.get("b")!.data[0]).toBe(1.5);
    expect(f.tensors.get("s")!.data[0]).toBeCloseTo(2 ** -24, 30);
  });
  it("names what is wrong in malformed files", () => {
    const ok = { t: { dtype: "F32", shape: [1], data_offsets: [0, 4] } };
    const four = new Uint8Array(4);
    expect(() => decodeSafetensors(new Uint8Array(3))).toThrow(/too short/);
    expect(() => decodeSafetensors(raw(ok, four, 9999))).toThrow(/header length 9999/);
    expect(() => decodeSafetensors(raw("{not json", four))).toThrow(/not valid JSON/);
    expect(() =>
      decodeSafetensors(
        raw({ t: { dtype: "I64", shape: [1], data_offsets: [0, 8] } }, new Uint8Array(8)),
      ),
    ).toThrow(/unsupported dtype "I64"/);
    expect(() =>
      decodeSafetensors(raw({ t: { dtype: "F32", shape: [2], data_offsets: [0, 8] } }, four)),
    ).toThrow(/truncated/);
    expect(() =>
      decodeSafetensors(
        raw(
          {
            a: { dtype: "F32", shape: [1], data_offsets: [0, 4] },
            b: { dtype: "F32", shape: [1], data_offsets: [2, 6] },
          },
          new Uint8Array(8),
        ),
      ),
    ).toThrow(/overlapping/);
    expect(() =>
      decodeSafetensors(raw({ t: { dtype: "F32", shape: [3], data_offsets: [0, 4] } }, four)),
    ).toThrow(/needs 12/);
    expect(() =>
      decodeSafetensors(raw({ t: { dtype: "F32", shape: [-1], data_offsets: [0, 4] } }, four)),
    ).toThrow(/invalid shape/);
    expect(() => decodeSafetensors(raw(ok, new Uint8Array(7)), "m.safetensors")).toThrow(
      "m.safetensors: 3 bytes after the last tensor's end",
    );
    expect(() =>
      decodeSafetensors(
        raw({ t: { dtype: "F32", shape: [1], data_offsets: [4, 8] } }, new Uint8Array(8)),
      ),
    ).toThrow(/4 bytes before tensor "t" belong to no tensor/);
  });
  it("writes files atomically and reads them back; truncation is detected", () => {
    const dir = mkdtempSync(join(tmpdir(), "st-"));
    const p = join(dir, "m.safetensors");
    writeSafetensorsFile(p, { w: { data: Float32Array.of(1, 2), shape: [2] } });
    expect(readdirSync(dir)).toEqual(["m.safetensors"]);
    expect(Array.from(readSafetensorsFile(p).tensors.get("w")!.data)).toEqual([1, 2]);
    const bytes = readFileSync(p);
    writeFileSync(p, bytes.subarray(0, bytes.length - 2));
    expect(() => readSafetensorsFile(p)).toThrow(/truncated/);
    // bytes appended after the last tensor: the file and the count named
    writeFileSync(p, Buffer.concat([bytes, Buffer.from("extra")]));
    expect(() => readSafetensorsFile(p)).toThrow(
      `${p}: 5 bytes after the last tensor's end (byte ${bytes.length} of ${bytes.length + 5})`,
    );
    expect(() => readSafetensorsFile(join(dir, "missing"))).toThrow(
      /cannot read .*missing: it does not exist/,
    );
  });
});
