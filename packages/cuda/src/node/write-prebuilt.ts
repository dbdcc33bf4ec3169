/*
 * Make the prebuilt CUDA pieces (prebuilt.ts) into a folder: the driver addon compiled by `cc`
 * against the given Node-API headers (those of the Node.js the bundle ships), and the kernels
 * compiled by nvcc into one fatbin of PREBUILT_SASS cubins and PREBUILT_PTX, with manifest.json.
 * Used by `pnpm bundle`; ~30 s of nvcc on two cores.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADDON_SOURCE, compileAddon } from "./build-addon.js";
import { compileWithNvcc, kernelUnitHash, nvccVersion } from "./compile-kernels.js";
import { fatbinContents } from "./fatbin.js";
import { PREBUILT_PTX, PREBUILT_SASS, type PrebuiltManifest, sha256 } from "./prebuilt.js";

/** What `writePrebuilt` needs. */
export interface PrebuildOptions {
  /** The folder to write (created). */
  outDir: string;
  nvcc: string;
  /** The Node-API headers to compile the addon against. */
  nodeInclude: string;
  /** The C compiler (default `CC`, else cc). */
  cc?: string;
}

/** Build the addon and the fatbin into `o.outDir` with their manifest; throws one line. */
export async function writePrebuilt(o: PrebuildOptions): Promise<PrebuiltManifest> {
  mkdirSync(o.outDir, { recursive: true });
  const addonFile = `cuda-driver-${process.platform}-${process.arch}.node`;
  const err = await compileAddon(
    o.cc ?? process.env.CC ?? "cc",
    o.nodeInclude,
    join(o.outDir, addonFile),
  );
  if (err !== null) throw new Error(err);
  const k = await compileWithNvcc(o.nvcc, PREBUILT_SASS, PREBUILT_PTX);
  if (!k.ok) throw new Error(k.error);
  writeFileSync(join(o.outDir, "kernels.fatbin"), k.image);
  const contents = fatbinContents(k.image);
  const m: PrebuiltManifest = {
    addon: {
      file: addonFile,
      sourceSha256: sha256(readFileSync(ADDON_SOURCE)),
      platform: process.platform,
      arch: process.arch,
    },
    kernels: {
      file: "kernels.fatbin",
      unitSha256: kernelUnitHash(),
      sass: contents.sass,
      ptx: contents.ptx,
      nvcc: await nvccVersion(o.nvcc),
    },
  };
  writeFileSync(join(o.outDir, "manifest.json"), `${JSON.stringify(m, null, 2)}\n`);
  return m;
}
