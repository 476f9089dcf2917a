// Writes src/csi/proto/csi-descriptor.ts: the parsed form (protobufjs JSON) of our csi.proto, so
// the resizer builds its message codecs (src/csi/proto/codec.ts) from a plain object instead of
// parsing the .proto text. Run after editing csi.proto:
//   node --import tsx scripts/gen-csi-descriptor.ts
// src/csi/proto/descriptor.test.ts fails while the checked-in file differs from this output.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CSI_DESCRIPTOR_PATH, renderCsiDescriptorModule } from '../src/csi/proto/descriptor-source.js';

writeFileSync(CSI_DESCRIPTOR_PATH, renderCsiDescriptorModule());
process.stdout.write(`wrote ${fileURLToPath(new URL(`file://${CSI_DESCRIPTOR_PATH}`))}\n`);
