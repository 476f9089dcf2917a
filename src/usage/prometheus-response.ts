// Reading an answer of Prometheus's instant query API (`GET /api/v1/query`): the samples of an
// instant vector, each with its labels and value, or the error Prometheus reported. Pure.

export interface PromSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export class PrometheusAnswerError extends Error {
  constructor(
    message: string,
    /** No answer within the query's time bound. */
    readonly timedOut = false,
  ) {
    super(message);
    this.name = 'PrometheusAnswerError';
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The vector of a successful answer; throws PrometheusAnswerError with Prometheus's own error otherwise. */
export function vectorOf(answer: unknown): PromSample[] {
  if (!isObject(answer)) throw new PrometheusAnswerError('the answer is not a JSON object');
  if (answer['status'] !== 'success') {
    const type = typeof answer['errorType'] === 'string' ? `${answer['errorType']}: ` : '';
    throw new PrometheusAnswerError(`the query failed: ${type}${typeof answer['error'] === 'string' ? answer['error'] : 'no error given'}`);
  }
  const data = answer['data'];
  if (!isObject(data) || data['resultType'] !== 'vector' || !Array.isArray(data['result'])) {
    throw new PrometheusAnswerError(`the answer is not an instant vector (resultType ${JSON.stringify(isObject(data) ? data['resultType'] : undefined)})`);
  }
  const samples: PromSample[] = [];
  for (const entry of data['result']) {
    if (!isObject(entry) || !isObject(entry['metric']) || !Array.isArray(entry['value'])) continue;
    // [ <unix time>, "<value>" ]: the value is a string so that NaN and ±Inf survive JSON.
    const value = Number(entry['value'][1]);
    if (!Number.isFinite(value)) continue;
    const labels: Record<string, string> = {};
    for (const [name, label] of Object.entries(entry['metric'])) if (typeof label === 'string') labels[name] = label;
    samples.push({ labels, value });
  }
  return samples;
}

/** A series' identity: its labels but the metric name, sorted (timestamp() drops the name). */
export function seriesKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.entries(labels)
      .filter(([name]) => name !== '__name__')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}
