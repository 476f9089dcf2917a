import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_ADDRESS_TYPES, kubeletUrl } from './node-address.js';
import type { Node, NodeAddress } from '../model/objects.js';

const node = (addresses: NodeAddress[], port?: number): Node => ({
  metadata: { name: 'n1' },
  status: { addresses, ...(port === undefined ? {} : { daemonEndpoints: { kubeletEndpoint: { Port: port } } }) },
});
const url = (n: Node, types = DEFAULT_ADDRESS_TYPES) => {
  const e = kubeletUrl(n, types, '/stats/summary');
  return e.kind === 'ok' ? e.url.href : e.message;
};

const all: NodeAddress[] = [
  { type: 'ExternalIP', address: '203.0.113.7' },
  { type: 'InternalIP', address: '10.0.0.7' },
  { type: 'Hostname', address: 'node-1' },
  { type: 'InternalDNS', address: 'node-1.internal' },
];

const rows: { name: string; node: Node; types?: readonly string[]; expect: string }[] = [
  { name: 'the default order prefers the Hostname, whatever the list order', node: node(all, 10250), expect: 'https://node-1:10250/stats/summary' },
  {
    name: 'then InternalDNS',
    node: node(
      all.filter((a) => a.type !== 'Hostname'),
      10250,
    ),
    expect: 'https://node-1.internal:10250/stats/summary',
  },
  {
    name: 'then InternalIP before ExternalIP',
    node: node(all.filter((a) => a.type.startsWith('I') && a.type !== 'InternalDNS').concat(all[0]!), 10250),
    expect: 'https://10.0.0.7:10250/stats/summary',
  },
  { name: 'a given order: InternalIP first', node: node(all, 10250), types: ['InternalIP', 'Hostname'], expect: 'https://10.0.0.7:10250/stats/summary' },
  { name: 'the port the kubelet reports', node: node([{ type: 'InternalIP', address: '10.0.0.7' }], 10255), expect: 'https://10.0.0.7:10255/stats/summary' },
  { name: 'no reported port: 10250', node: node([{ type: 'InternalIP', address: '10.0.0.7' }]), expect: 'https://10.0.0.7:10250/stats/summary' },
  { name: 'a reported port of 0: 10250', node: node([{ type: 'InternalIP', address: '10.0.0.7' }], 0), expect: 'https://10.0.0.7:10250/stats/summary' },
  { name: 'an IPv6 address in brackets', node: node([{ type: 'InternalIP', address: 'fd00::7' }], 10250), expect: 'https://[fd00::7]:10250/stats/summary' },
  {
    name: 'first of two of one type',
    node: node([
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'InternalIP', address: '10.0.0.8' },
    ]),
    expect: 'https://10.0.0.7:10250/stats/summary',
  },
  {
    name: 'none of the types asked for',
    node: node([{ type: 'ExternalIP', address: '203.0.113.7' }]),
    types: ['InternalIP'],
    expect: 'node n1 reports no address of the types InternalIP',
  },
  {
    name: 'no addresses at all',
    node: { metadata: { name: 'n1' } },
    expect: 'node n1 reports no address of the types Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP',
  },
];

for (const row of rows) {
  test(`kubeletUrl: ${row.name}`, () => assert.equal(url(row.node, row.types), row.expect));
}
