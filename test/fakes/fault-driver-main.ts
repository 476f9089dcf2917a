// The fault driver as a process of its own, so a fault test can SIGKILL it mid-call and start it
// again with its volumes intact (the e2e mock driver forgets them):
//
//   node --import tsx test/fakes/fault-driver-main.ts --endpoint=/tmp/x/csi.sock \
//     --state-file=/tmp/x/volumes.json [--call-log=/tmp/x/calls.jsonl] [--name=fault.csi.test] \
//     [--expand-delay-ms=100] [--node-expansion-required]
//
// The state file is read at start (write it first with writeFaultDriverState()) and rewritten
// after every change. SIGTERM or SIGINT stops the server and exits 0.
import { parseArgs } from 'node:util';
import { FaultDriver } from './fault-driver.js';

const USAGE =
  'usage: fault-driver-main.ts --endpoint=PATH --state-file=PATH [--call-log=PATH] [--name=NAME] [--expand-delay-ms=MS] [--node-expansion-required]';

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      endpoint: { type: 'string' },
      'state-file': { type: 'string' },
      'call-log': { type: 'string' },
      name: { type: 'string' },
      'expand-delay-ms': { type: 'string' },
      'node-expansion-required': { type: 'boolean' },
    },
  });
  const endpoint = values.endpoint?.replace(/^unix:\/\//, '');
  if (!endpoint || !values['state-file']) throw new Error(`--endpoint and --state-file are required\n${USAGE}`);
  const delay = Number(values['expand-delay-ms'] ?? '0');
  if (!Number.isInteger(delay) || delay < 0 || delay > 600_000)
    throw new Error(`--expand-delay-ms must be an integer in [0, 600000], not ${values['expand-delay-ms']}`);
  const driver = await FaultDriver.start({
    socketPath: endpoint,
    stateFile: values['state-file'],
    expandDelayMs: delay,
    nodeExpansionRequired: values['node-expansion-required'] ?? false,
    ...(values['call-log'] ? { callLog: values['call-log'] } : {}),
    ...(values.name ? { name: values.name } : {}),
  });
  process.stdout.write(`fault driver ${driver.name} serving on ${driver.address} (pid ${process.pid})\n`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void driver.stop().then(() => process.exit(0)));
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`fault driver: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
