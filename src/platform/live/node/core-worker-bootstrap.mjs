// Starts a core worker. Node 20 cannot load a .ts file in a Worker directly (TOOLCHAIN.md): when
// the entry is TypeScript (running from a clone under tsx), register tsx first; a built dist/
// entry is plain JavaScript and loads as is.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
