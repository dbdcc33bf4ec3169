export {
  ISOLATION_NOTICE,
  startWebWorkerPool,
  stopWebWorkerPool,
  type WebPoolOptions,
  type WebPoolStart,
  webPoolJobCount,
} from "./pool.js";
export { serveWebPoolWorker, type WebWorkerInit } from "./pool-worker.js";
