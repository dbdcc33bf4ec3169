/*
 * What a CUDA fatbin holds, read from its headers (the format nvcc -fatbin writes; no
 * cuobjdump needed): a 16-byte header — magic 0xBA55ED50 (u32), version (u16), header size
 * (u16), size of the entries (u64) — then entries, each a header — kind (u16: 1 PTX, 2 ELF
 * cubin), version (u16), header size (u32), payload size (u64), …, architecture (u32 at byte
 * 28: 80 for sm_80 / compute_80) — followed by its payload.
 */

/** The architectures of a fatbin's machine code and of its PTX. */
export interface FatbinContents {
  /** "sm_80", … (cubins the driver loads as they are). */
  sass: string[];
  /** "compute_90", … (PTX the driver compiles for a newer GPU). */
  ptx: string[];
}

const MAGIC = 0xba55ed50;

/** The contents of `image`; throws naming what is wrong when it is not a fatbin. */
export function fatbinContents(image: Uint8Array): FatbinContents {
  const v = new DataView(image.buffer, image.byteOffset, image.byteLength);
  if (image.byteLength < 16 || v.getUint32(0, true) !== MAGIC)
    throw new Error("not a CUDA fatbin (no 0xBA55ED50 magic)");
  const headerSize = v.getUint16(6, true);
  const end = headerSize + Number(v.getBigUint64(8, true));
  if (end > image.byteLength) throw new Error("a truncated CUDA fatbin");
  const out: FatbinContents = { sass: [], ptx: [] };
  for (let at = headerSize; at + 32 <= end; ) {
    const kind = v.getUint16(at, true);
    const entryHeader = v.getUint32(at + 4, true);
    const payload = Number(v.getBigUint64(at + 8, true));
    const arch = v.getUint32(at + 28, true);
    if (kind === 2) out.sass.push(`sm_${arch}`);
    else if (kind === 1) out.ptx.push(`compute_${arch}`);
    if (entryHeader === 0) throw new Error("a CUDA fatbin entry with an empty header");
    at += entryHeader + payload;
  }
  return out;
}

const number = (arch: string) => Number(/\d+$/.exec(arch)?.[0] ?? Number.NaN);

/**
 * How a GPU of `arch` (sm_XY) runs a fatbin of `contents`: a cubin of its own major version and
 * a minor version at most its own (cubins run on later minor versions), else PTX of an older
 * architecture compiled by the driver; null when neither is there.
 */
export function fatbinCovers(contents: FatbinContents, arch: string): string | null {
  const want = number(arch);
  const sass = contents.sass
    .filter((s) => Math.floor(number(s) / 10) === Math.floor(want / 10) && number(s) <= want)
    .sort((a, b) => number(b) - number(a))[0];
  if (sass) return sass === arch ? `${sass} code` : `${sass} code (runs on ${arch})`;
  const ptx = contents.ptx
    .filter((p) => number(p) <= want)
    .sort((a, b) => number(b) - number(a))[0];
  return ptx ? `${ptx} PTX, compiled by the driver for ${arch}` : null;
}
