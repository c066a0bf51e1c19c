/**
 * The socket core's message ledger (socket-core-protocol.ts): the marks that decide which messages
 * a replacement core gets again. A message marked wrongly unsettled runs twice; one marked wrongly
 * settled is lost with a dying core.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  isSettled,
  ledgerAt,
  MESSAGE_LEDGER_BYTES,
  MESSAGE_LEDGER_SLOTS,
  markSettled,
  nextMessageId,
} from '../../../../src/platform/live/node/socket-core-protocol.ts';

function freshLedger(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(MESSAGE_LEDGER_BYTES));
}

test('a late mark of an older message sharing a slot leaves the newer one settled (it would run again on a replacement)', () => {
  const ledger = freshLedger();
  const older = 7;
  const newer = older + MESSAGE_LEDGER_SLOTS;
  assert.equal(ledgerAt(older), ledgerAt(newer));
  markSettled(ledger, newer, 0);
  // The older one was buffered for a migration all along, and is forwarded only now.
  markSettled(ledger, older, 3);
  assert.ok(isSettled(ledger, newer, 0), 'the newer message stays settled');
  assert.ok(
    !isSettled(ledger, older, 10),
    'the older one was let go by the controller: its mark is not there',
  );
});

test('a forward counts as settled only once the controller read that many forwards', () => {
  const ledger = freshLedger();
  markSettled(ledger, 42, 5);
  assert.ok(!isSettled(ledger, 42, 4));
  assert.ok(isSettled(ledger, 42, 5));
  markSettled(ledger, 43, 0);
  assert.ok(isSettled(ledger, 43, 0), 'run or refused: settled at once');
  assert.ok(!isSettled(ledger, 44, 100), 'never marked');
});

test('ids wrap at 2^32 without 0, and the ledger still orders them across the wrap', () => {
  assert.equal(nextMessageId(0), 1);
  assert.equal(nextMessageId(0xffff_fffe), 0xffff_ffff);
  assert.equal(nextMessageId(0xffff_ffff), 1, '0 means "not numbered"');
  const ledger = freshLedger();
  const beforeWrap = 0xffff_ffff - MESSAGE_LEDGER_SLOTS + 10; // shares a slot with 9 after the wrap
  const afterWrap = nextMessageId(beforeWrap + MESSAGE_LEDGER_SLOTS - 10) + 8;
  assert.equal(ledgerAt(beforeWrap), ledgerAt(afterWrap));
  markSettled(ledger, afterWrap, 0);
  markSettled(ledger, beforeWrap, 0);
  assert.ok(isSettled(ledger, afterWrap, 0), 'the id after the wrap is the newer one');
  // Forward numbers wrap too: the 2^32-th forward is read once the controller read that many.
  markSettled(ledger, 99, 2 ** 32 + 2);
  assert.ok(!isSettled(ledger, 99, 2 ** 32 + 1));
  assert.ok(isSettled(ledger, 99, 2 ** 32 + 2));
});
