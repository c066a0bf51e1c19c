/**
 * ipipe's public API. Each area also has its own subpath (`ipipe/actor`, `ipipe/dmo`,
 * `ipipe/sched`, `ipipe/runtime`, `ipipe/errors`, `ipipe/ids`); this root re-exports them all.
 */

export * from './actor/index.ts';
export * from './dmo/index.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './runtime/index.ts';
export * from './sched/index.ts';
