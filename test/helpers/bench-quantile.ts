/**
 * The binding benchmarks' quantile (test/bench/service-binding.ts, test/bench/a9s-binding.ts):
 * the sample at index floor(q·n) of the sorted times, so p50 of an even count is the upper middle.
 */
export const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
