import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Explanation } from './explain-decision.js';
import { renderExplanation, renderExplanationJson } from './explain-report.js';

const NOW = new Date('2026-12-01T10:00:00Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

const explanation: Explanation = {
  claimFound: true,
  verdict: 'Retry with backoff: the last expansion failed.',
  resizeState: 'backoff',
  modifyState: 'waiting',
  reasons: ['The claim asks for 10Ti and has 1Gi.'],
  nextSteps: ['The driver refused the size as out of range: ask for less.'],
  conditions: [{ type: 'ControllerResizeError', status: 'True', lastTransitionTime: minutesAgo(3), message: 'failed to expand pvc' }],
  events: [{ type: 'Warning', reason: 'VolumeResizeFailed', count: 3, at: new Date(NOW.getTime() - 180_000), message: 'rpc error: code = OutOfRange' }],
};

test('explain: the rendered text carries the decision, state, reasons, conditions, events and next steps', () => {
  const text = renderExplanation('app/data', explanation, NOW);
  assert.match(text, /^PVC app\/data\nDecision: Retry with backoff.*\nState: resize in backoff, modify waiting\n/);
  assert.match(text, /Why:\n {2}- The claim asks for 10Ti and has 1Gi\./);
  assert.match(text, /Conditions:\n {2}- ControllerResizeError=True \(3m0s ago\): failed to expand pvc/);
  assert.match(text, /Events:\n {2}- Warning VolumeResizeFailed 3m0s ago \(x3\): rpc error/);
  assert.match(text, /Next:\n {2}- The driver refused the size as out of range/);
});

test('explain: the JSON report names the claim, every field, and what could not be read', () => {
  const json = JSON.parse(renderExplanationJson('app/data', explanation, ['events: forbidden'])) as Record<string, unknown>;
  assert.equal(json['claim'], 'app/data');
  assert.equal(json['verdict'], explanation.verdict);
  assert.equal(json['resizeState'], 'backoff');
  assert.equal(json['modifyState'], 'waiting');
  assert.deepEqual(json['nextSteps'], explanation.nextSteps);
  assert.deepEqual(json['unknown'], ['events: forbidden']);
});

test('explain: no state line when nothing is unfinished', () => {
  const text = renderExplanation('app/data', { ...explanation, resizeState: undefined, modifyState: undefined }, NOW);
  assert.doesNotMatch(text, /State:/);
});
