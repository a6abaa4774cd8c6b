// The part of autocannon 8's API the benchmark uses; the package ships no types.
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
  }

  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    total: number;
  }

  interface Result {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
