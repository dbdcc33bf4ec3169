/** A shape as error messages print it: [2,3,4]. */
export const shapeStr = (s: readonly number[]): string => `[${s.join(",")}]`;
