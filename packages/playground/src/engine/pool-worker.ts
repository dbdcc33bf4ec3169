/**
 * A thread-pool worker of the model worker. It imports every package whose kernels the models
 * here run (the SSD scan, attention, GEMM, element-wise and loss kernels all come in through
 * @loop/looped), so jobs never need to import a module by URL (see @loop/tensor/web).
 */
import * as looped from "@loop/looped";
import { serveWebPoolWorker } from "@loop/tensor/web";

serveWebPoolWorker([looped]);
