export {
  readJsonFile,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from "./files.js";
export { startThreadPool, stopThreadPool } from "./threads.js";
