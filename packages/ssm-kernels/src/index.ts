export {
  type ConvGrads,
  type ConvShape,
  causalConv1d,
  causalConv1dBackward,
  causalConv1dForward,
  causalConv1dState,
} from "./causal-conv1d.js";
export { gatedRmsnorm, gatedRmsnormBackward, gatedRmsnormForward } from "./gated-rmsnorm.js";
export { ssdChunkedBackward } from "./ssd-chunked-backward.js";
export { type SsdChunkedSaved, ssdChunkedForward } from "./ssd-chunked-forward.js";
export { type SsdChunkedOptions, ssdScanChunked } from "./ssd-scan-chunked.js";
export {
  type SsdScanOptions,
  type SsdScanResult,
  ssdScanRef,
  ssdScanRefBackward,
  ssdScanRefForward,
} from "./ssd-scan-ref.js";
export { type SsdArrays, type SsdGrads, type SsdShape, ssdShape } from "./ssd-shape.js";
