// Starts a core worker. Node 20 cannot load a .ts file in a Worker directly (TOOLCHAIN.md): when
// the entry or an actor module is TypeScript (running from a clone under tsx, or a built package
// serving a user's .ts actors), register tsx first; plain JavaScript loads as is.
import { workerData } from 'node:worker_threads';

const typescript = (path) => /\.[cm]?ts$/.test(path);
if (typescript(workerData.entry) || (workerData.catalog ?? []).some((entry) => typescript(entry.module))) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
