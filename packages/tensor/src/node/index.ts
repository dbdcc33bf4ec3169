export { readSafetensorsFile, writeFileAtomic, writeSafetensorsFile } from "./files.js";
