// A list or watch the server refuses (403, a missing RBAC rule): said once for a run of refusals,
// retried with backoff without a word, said again when the server accepts one; the informer syncs
// then without a restart. Other errors are still said at every retry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeApiWithClient, FakeApiServer, type RecordedRequest } from '../../../test/fakes/fake-apiserver.js';
import { eventually } from '../../../test/support/eventually.js';
import { pvc } from '../../../test/support/builders.js';
import { createLogger } from '../../observability/log/logger.js';
import { KubeApiError } from '../api/errors.js';
import { Informer, type InformerAccessListener, type InformerOptions } from './informer.js';
import type { KubeObject } from '../../model/objects.js';
import { Resources } from '../api/resources.js';

const PVCS = 'v1/persistentvolumeclaims';
const FORBIDDEN = 'List/watch forbidden, retrying quietly until it is allowed';
const ALLOWED = 'List/watch allowed again';
const FAILED = 'List/watch failed, retrying';

/** Lines of the informer's log carrying this message. */
const linesOf = (lines: string[], message: string) => lines.filter((l) => l.includes(`"${message}"`));

interface Refusals {
  /** When each refused request arrived (ms, performance.now()). */
  readonly at: number[];
  /** The server refuses while this is true. */
  refusing: boolean;
}

/** Refuses the requests `which` selects with 403 Forbidden while `refusals.refusing`, recording when. */
function refuse(server: FakeApiServer, which: (r: RecordedRequest) => boolean): Refusals {
  const refusals: Refusals = { at: [], refusing: true };
  server.failNext({
    status: 403,
    reason: 'Forbidden',
    times: Infinity,
    match: (r) => {
      if (!refusals.refusing || !which(r)) return false;
      refusals.at.push(performance.now());
      return true;
    },
  });
  return refusals;
}

async function start(
  t: { after: (fn: () => unknown) => void },
  opts: Partial<InformerOptions<KubeObject>> = {},
  before?: (s: FakeApiServer) => void,
): Promise<{ server: FakeApiServer; informer: Informer; lines: string[] }> {
  const { server, client } = await fakeApiWithClient(t, (s) => {
    s.put(PVCS, pvc({ name: 'a' }));
    before?.(s);
  });
  const lines: string[] = [];
  const informer = new Informer({
    listWatcher: client.listWatcher(Resources.persistentVolumeClaims),
    log: createLogger({ verbosity: 10, format: 'text', write: (l) => lines.push(l) }),
    backoff: { initialMs: 10, maxMs: 80, jitter: 0 },
    watchList: false,
    ...opts,
  });
  const ctl = new AbortController();
  const running = informer.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await running;
  });
  return { server, informer, lines };
}

const isList = (r: RecordedRequest) => r.method === 'GET' && r.query.get('watch') !== 'true';
const isWatch = (r: RecordedRequest) => r.query.get('watch') === 'true';

test('refused lists: one line for the whole run of refusals, none per retry, each counted; one line when allowed, and the informer syncs', async (t) => {
  let refusals!: Refusals;
  const counted: string[] = [];
  const { informer, lines } = await start(t, { refusals: { inc: ({ resource }) => counted.push(resource) } }, (s) => {
    refusals = refuse(s, isList);
  });
  await eventually('six refused lists', () => refusals.at.length >= 6);
  assert.equal(informer.hasSynced(), false);
  assert.equal(linesOf(lines, FORBIDDEN).length, 1, lines.join('\n'));
  assert.match(linesOf(lines, FORBIDDEN)[0]!, /resource="persistentvolumeclaims" err="injected failure"/);
  assert.equal(linesOf(lines, FAILED).length, 0, 'a refusal is not a failure said at every retry');
  assert.equal(linesOf(lines, ALLOWED).length, 0);

  refusals.refusing = false;
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys(), ['ns/a']);
  assert.equal(linesOf(lines, FORBIDDEN).length, 1);
  assert.equal(linesOf(lines, ALLOWED).length, 1);
  assert.match(linesOf(lines, ALLOWED)[0]!, /resource="persistentvolumeclaims"$/);
  assert.equal(counted.length, refusals.at.length, 'every refusal counted');
  assert.ok(counted.every((r) => r === 'persistentvolumeclaims'));
});

test('refused lists are retried with the backoff: each wait at least the doubled one before, up to the cap', async (t) => {
  let refusals!: Refusals;
  await start(t, {}, (s) => {
    refusals = refuse(s, isList);
  });
  await eventually('seven refused lists', () => refusals.at.length >= 7);
  const gaps = refusals.at.slice(1).map((at, i) => at - refusals.at[i]!);
  // initialMs 10, factor 2, no jitter, maxMs 80: 10, 20, 40, 80, 80, 80. Lower bounds only (a
  // loaded machine only adds), with 1 ms for the timers' rounding.
  for (const [i, floor] of [10, 20, 40, 80, 80, 80].entries()) assert.ok(gaps[i]! >= floor - 1, `wait ${i} was ${gaps[i]} ms, not >= ${floor}`);
});

test('with an access listener: refused() once with the 403, allowed() once when accepted; the informer logs neither', async (t) => {
  const calls: string[] = [];
  const access: InformerAccessListener = {
    refused: (err) => calls.push(`refused ${err instanceof KubeApiError ? err.status : 'not an API error'}`),
    allowed: () => calls.push('allowed'),
  };
  let refusals!: Refusals;
  const { informer, lines } = await start(t, { access }, (s) => {
    refusals = refuse(s, isList);
  });
  await eventually('four refused lists', () => refusals.at.length >= 4);
  assert.deepEqual(calls, ['refused 403']);
  refusals.refusing = false;
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(calls, ['refused 403', 'allowed']);
  assert.equal(linesOf(lines, FORBIDDEN).length + linesOf(lines, ALLOWED).length + linesOf(lines, FAILED).length, 0);
});

test('a refused watch-list is retried as a watch-list (no fall back to lists), said once, and syncs when allowed', async (t) => {
  let refusals!: Refusals;
  const { server, informer, lines } = await start(t, { watchList: true }, (s) => {
    refusals = refuse(s, isWatch);
  });
  await eventually('four refused watch-lists', () => refusals.at.length >= 4);
  assert.equal(server.listRequests().length, 0, 'a 403 is not "watch-list unsupported"');
  assert.equal(linesOf(lines, FORBIDDEN).length, 1);
  refusals.refusing = false;
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys(), ['ns/a']);
  assert.equal(linesOf(lines, ALLOWED).length, 1);
});

test('refused again after being allowed (the rule revoked): said again, once, and again when it clears', async (t) => {
  const calls: string[] = [];
  const access: InformerAccessListener = { refused: () => calls.push('refused'), allowed: () => calls.push('allowed') };
  const { server, informer } = await start(t, { access });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(calls, [], 'never refused: nothing to say');

  // The watch ends and every watch after it is refused.
  const refusals = refuse(server, isWatch);
  server.dropWatches();
  await eventually('four refused watches', () => refusals.at.length >= 4);
  assert.deepEqual(calls, ['refused']);
  refusals.refusing = false;
  server.put(PVCS, pvc({ name: 'b' }));
  await eventually('the watch resumed', () => informer.store.get('ns/b') !== undefined);
  assert.deepEqual(calls, ['refused', 'allowed']);
});

test('a 500 between refusals is said at its retry and does not end the run of refusals', async (t) => {
  // Lists are refused, then one fails with 500, then they are refused again, then accepted.
  let phase: 'refuse' | 'fail' | 'refuseAgain' | 'accept' = 'refuse';
  let refused = 0;
  const { informer, lines } = await start(t, {}, (s) => {
    s.failNext({
      status: 403,
      reason: 'Forbidden',
      times: Infinity,
      match: (r) => {
        if (!isList(r) || (phase !== 'refuse' && phase !== 'refuseAgain')) return false;
        refused++;
        return true;
      },
    });
    s.failNext({
      status: 500,
      times: Infinity,
      match: (r) => {
        if (!isList(r) || phase !== 'fail') return false;
        phase = 'refuseAgain';
        return true;
      },
    });
  });
  await eventually('two refused lists', () => refused >= 2);
  phase = 'fail';
  await eventually('refused again after the 500', () => phase === 'refuseAgain' && refused >= 4);
  assert.equal(linesOf(lines, FAILED).length, 1);
  assert.equal(linesOf(lines, FORBIDDEN).length, 1, 'still the same run of refusals');
  phase = 'accept';
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.equal(linesOf(lines, ALLOWED).length, 1);
});
