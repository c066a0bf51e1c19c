/**
 * Small builders for hand-written KV histories in the checker's tests: `ok(...)` for an answered
 * operation, `lost(...)` for one whose outcome is unknown (timed out).
 */

import type { KvHistoryOp, KvInput, KvOutput } from '../../../../src/apps/rkv/check/index.ts';

export const put = (key: string, value: string): KvInput => ({ op: 'put', key, value });
export const get = (key: string): KvInput => ({ op: 'get', key });
export const del = (key: string): KvInput => ({ op: 'del', key });

export const putOk: KvOutput = { op: 'put' };
export const read = (value: string | null): KvOutput => ({ op: 'get', value });
export const deleted = (existed: boolean): KvOutput => ({ op: 'del', existed });

/** An operation of `clientId` over [callAt, returnAt] with its output. */
export function ok(
  clientId: number,
  input: KvInput,
  output: KvOutput,
  callAt: number,
  returnAt: number,
): KvHistoryOp {
  return { clientId, input, callAt, status: 'ok', output, returnAt };
}

/** An operation whose client gave up: it may or may not have taken effect. */
export function lost(clientId: number, input: KvInput, callAt: number): KvHistoryOp {
  return { clientId, input, callAt, status: 'unknown' };
}
