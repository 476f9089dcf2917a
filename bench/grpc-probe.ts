// Evaluation probe for issue 15 (not part of `npm run bench`): the CPU this process spends per
// unary CSI call through @grpc/grpc-js versus a bare node:http2 client, against the Kubernetes
// CSI mock driver (grpc-go, its own process, so only the client's CPU is counted). Those two arms
// use the same message codecs (protobufjs, as the sidecar did) so the difference is the
// transport's; a third arm is what the sidecar runs now (src/csi/grpc-channel.ts with
// src/csi/proto/codec.ts), and the codecs' own cost is printed on its own line. Arms alternate
// A B C A B C. With BEFORE_ROOT=<a source tree> (e.g. bench/.build/snap from bench/snapshot.sh) a
// fourth arm runs that tree's grpc-channel.ts, to compare a change of the channel before/after.
// Run (needs the built components):
//   [BEFORE_ROOT=dir] node --import tsx bench/grpc-probe.ts [calls per round] [concurrency] [rounds]
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { csiTestClient } from '../test/cluster/csi-proto.js';
import { startMockDriver } from '../test/cluster/mock-driver.js';
import { CsiMethod, csiMethod } from '../src/csi/proto/load.js';
import { referenceDecode, referenceEncode } from '../src/csi/proto/protobufjs-reference.js';
import { GrpcChannel } from '../src/csi/grpc-channel.js';
import { resolve as resolvePath } from 'node:path';

const [k = 3000, concurrency = 10, rounds = 3] = process.argv.slice(2).map(Number);
const driver = await startMockDriver();
const admin = csiTestClient(driver.protoPath, driver.address);
const created = await admin.call<{ volume: { volume_id: string } }>('Controller', 'CreateVolume', {
  name: 'probe', capacity_range: { required_bytes: String(2 ** 30) },
  volume_capabilities: [{ mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
});
admin.close();
const method = csiMethod(CsiMethod.ControllerExpandVolume);
// protobufjs in both arms, as the sidecar used it with grpc-js; our codec is timed on its own below.
const definition = {
  path: method.path,
  requestSerialize: (value: object) => referenceEncode(method.requestTypeName, value),
  responseDeserialize: (bytes: Uint8Array) => referenceDecode(method.responseTypeName, bytes),
};
const request = {
  volume_id: created.volume.volume_id,
  capacity_range: { required_bytes: String(2 ** 30) },
  secrets: { user: 'probe' },
  volume_capability: { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
};
type Call = () => Promise<unknown>;

function viaGrpcJs(): { call: Call; close(): void } {
  const client = new grpc.Client(driver.address, grpc.credentials.createInsecure(), { 'grpc.enable_channelz': 0 });
  const call: Call = () => new Promise((resolve, reject) => {
    client.makeUnaryRequest(definition.path, definition.requestSerialize as (v: object) => Buffer, definition.responseDeserialize as (b: Buffer) => object,
      request, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
  return { call, close: () => client.close() };
}

function viaHttp2(): { call: Call; close(): void } {
  const session = http2.connect('http://localhost', { createConnection: () => net.connect(driver.socketPath) });
  const call: Call = () => new Promise((resolve, reject) => {
    const body = definition.requestSerialize(request);
    const frame = Buffer.allocUnsafe(5 + body.length);
    frame[0] = 0;
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    const stream = session.request({
      ':method': 'POST', ':scheme': 'http', ':path': definition.path,
      'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '10S',
    }, { endStream: false });
    const chunks: Buffer[] = [];
    let grpcStatus: string | undefined;
    stream.on('response', (headers) => { if (headers['grpc-status'] !== undefined) grpcStatus = String(headers['grpc-status']); });
    stream.on('trailers', (trailers) => { grpcStatus = String(trailers['grpc-status']); });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      if (grpcStatus !== '0') return reject(new Error(`grpc-status ${grpcStatus}`));
      const all = Buffer.concat(chunks);
      resolve(definition.responseDeserialize(all.subarray(5, 5 + all.readUInt32BE(1))));
    });
    stream.end(frame);
  });
  return { call, close: () => session.close() };
}

function viaOurChannel(Channel: typeof GrpcChannel = GrpcChannel): { call: Call; close(): void } {
  const channel = new Channel({ socketPath: driver.socketPath });
  const never = new AbortController().signal;
  const call: Call = async () => method.decodeResponse(await channel.unary(method.path, method.encodeRequest(request), 10_000, never));
  return { call, close: () => channel.close() };
}

async function run(call: Call, n: number): Promise<{ cpuUs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      next++;
      await call();
    }
  }));
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, wallMs: performance.now() - started };
}

const beforeRoot = process.env['BEFORE_ROOT'];
const arms: Record<string, { call: Call; close(): void }> = { 'grpc-js': viaGrpcJs(), 'node:http2': viaHttp2(), 'ours': viaOurChannel() };
if (beforeRoot) {
  const before = (await import(resolvePath(beforeRoot, 'src/csi/grpc-channel.ts'))) as { GrpcChannel: typeof GrpcChannel };
  arms['ours@before'] = viaOurChannel(before.GrpcChannel);
}
for (const arm of Object.values(arms)) await run(arm.call, 200); // warm-up: connect, JIT
const totals = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  for (const [name, arm] of Object.entries(arms)) {
    const { cpuUs, wallMs } = await run(arm.call, k);
    (totals.get(name) ?? totals.set(name, []).get(name)!).push(cpuUs / k);
    process.stdout.write(`round ${r + 1} ${name.padEnd(10)} ${(cpuUs / k).toFixed(1)} µs CPU/call, ${(wallMs * 1000 / k).toFixed(1)} µs wall/call\n`);
  }
}
const response = referenceEncode(method.responseTypeName, { capacity_bytes: String(2 ** 30), node_expansion_required: false });
const codecCpu = (encode: (v: object) => Buffer, decode: (b: Uint8Array) => object) => {
  const before = process.cpuUsage();
  for (let i = 0; i < k; i++) {
    encode(request);
    decode(response);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / k;
};
const codec = { protobufjs: codecCpu(definition.requestSerialize, definition.responseDeserialize), ours: codecCpu(method.encodeRequest, method.decodeResponse) };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const a = median(totals.get('grpc-js')!);
const b = median(totals.get('node:http2')!);
const c = median(totals.get('ours')!);
process.stdout.write(`median grpc-js ${a.toFixed(1)} µs, node:http2 ${b.toFixed(1)} µs per call: ${((1 - b / a) * 100).toFixed(0)} % less\n`);
process.stdout.write(`median ours (grpc-channel.ts + codec.ts) ${c.toFixed(1)} µs per call: ${((1 - c / a) * 100).toFixed(0)} % less than grpc-js + protobufjs\n`);
if (beforeRoot) {
  const d = median(totals.get('ours@before')!);
  process.stdout.write(`median ours@before (${beforeRoot}) ${d.toFixed(1)} µs per call; ours ${c.toFixed(1)} µs: ${((1 - c / d) * 100).toFixed(0)} % less\n`);
}
process.stdout.write(`encode request + decode response per call: protobufjs ${codec.protobufjs.toFixed(1)} µs, codec.ts ${codec.ours.toFixed(1)} µs\n`);
for (const arm of Object.values(arms)) arm.close();
await driver.stop();
