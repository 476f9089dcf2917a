// The part of parse-prometheus-text-format's result the drift check reads (the package ships no types).
declare module 'parse-prometheus-text-format' {
  interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    /** COUNTER, GAUGE, HISTOGRAM, SUMMARY or UNTYPED. */
    readonly type: string;
    readonly metrics: readonly unknown[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
