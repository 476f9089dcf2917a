import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageOf } from './errors.js';

test('messageOf: an Error gives its message, anything else its string form', () => {
  assert.equal(messageOf(new Error('boom')), 'boom');
  assert.equal(messageOf(new TypeError('bad type')), 'bad type');
  assert.equal(messageOf('plain text'), 'plain text');
  assert.equal(messageOf(42), '42');
  assert.equal(messageOf(undefined), 'undefined');
  assert.equal(messageOf(Symbol('s')), 'Symbol(s)');
});
