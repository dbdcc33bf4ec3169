/**
 * WGSL: `quietNan()`, a NaN made at run time (a NaN constant is a shader compile error in WGSL),
 * for results that must show bad input rather than hide it (an out-of-range id, an empty mean).
 */
export const QUIET_NAN_WGSL = `
fn quietNan() -> f32 {
  var bits = 0x7fc00000u;
  return bitcast<f32>(bits);
}`;
