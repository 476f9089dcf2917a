// The `csi-resizer` command (§1): app/run.ts reads the command line and runs the process until it
// ends, app/exit.ts reports how it ended and picks the exit code. This file hands them the real
// process and exits with that code.
import { endProcess } from './app/exit.js';
import { runCommand } from './app/run.js';
const stdout = (text: string) => void process.stdout.write(text);
const stderr = (text: string) => void process.stderr.write(text);
const { end, log } = await runCommand({
  args: process.argv.slice(2),
  scriptPath: process.argv[1],
  entryUrl: import.meta.url,
  stdout,
  stderr,
  signals: process,
});
process.exit(endProcess(end, { log, stdout, stderr }));
