// CPU per kubelet summary of the summary reader of two trees (src/usage/kubelet-summary.ts): one
// summary as the scenario's stand-ins serve it (25 opted-in claims' pods, 5 pods of other claims,
// 15 pods without claims), cut into 16 KiB pieces as a TLS connection delivers it. A tree whose
// reader takes strings is fed as its transport fed it then (each piece decoded by a StringDecoder);
// one whose reader takes bytes gets the pieces as they are. Alternating, six blocks of 300 each.
//
//   node --max-semi-space-size=2 --import tsx bench/probes/summary-reader-cpu.ts /work/main .
import { resolve, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { FakeKubelet } from '../../test/fakes/fake-kubelet.js';

type Reader = { write(piece: never): void; end(): Map<string, unknown> };
type ReaderClass = new (wanted: ReadonlySet<string>) => Reader;

const trees = process.argv.slice(2).map((t) => resolve(t));
const volumes = Array.from({ length: 30 }, (_, i) => ({
  namespace: 'bench',
  claim: `ag-${i}`,
  pod: `pod-${i}`,
  capacityBytes: 10n << 30n,
  availableBytes: 5n << 30n,
  inodes: 655_360n,
  inodesFree: 589_824n,
}));
const wanted = new Set(volumes.slice(0, 25).map((v) => `bench/${v.claim}`));
// The stand-in's own summary builder, on a stand-in that was never started.
const summary = (FakeKubelet.prototype as unknown as { summary(this: unknown): unknown }).summary.call({ volumes, options: { fillerPods: 15 } });
const body = Buffer.from(JSON.stringify(summary));
const pieces: Buffer[] = [];
for (let o = 0; o < body.length; o += 16_384) pieces.push(body.subarray(o, o + 16_384));

const readers = await Promise.all(
  trees.map(async (tree) => {
    const { SummaryReader } = (await import(join(tree, 'src/usage/kubelet-summary.ts'))) as { SummaryReader: ReaderClass };
    const takesText = (() => {
      try {
        new SummaryReader(wanted).write('{' as never);
        return true;
      } catch {
        return false;
      }
    })();
    return () => {
      const reader = new SummaryReader(wanted);
      if (takesText) {
        const decoder = new StringDecoder('utf8');
        for (const p of pieces) reader.write(decoder.write(p) as never);
      } else for (const p of pieces) reader.write(p as never);
      return reader.end();
    };
  }),
);
for (const read of readers) if (read().size !== 25) throw new Error('a reader did not find the 25 claims');
const cpuMs = (read: () => unknown, n: number) => {
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) read();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000 / n;
};
for (let i = 0; i < 200; i++) for (const read of readers) read();
const blocks = trees.map(() => [] as number[]);
for (let b = 0; b < 6; b++) readers.forEach((read, k) => blocks[k]!.push(cpuMs(read, 300)));
console.log(`summary of ${body.length} bytes in ${pieces.length} pieces; cpu-ms per summary, six blocks of 300:`);
trees.forEach((tree, k) => console.log(`  ${tree}: ${blocks[k]!.map((x) => x.toFixed(3)).join(' ')}`));
