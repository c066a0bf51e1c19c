/**
 * The node socket's lookup: IPv4 literals answered synchronously (no tick before `sendmsg`), names
 * and anything else through dns.lookup as node:dgram would, and a real socket sends with it.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { literalLookup } from '../../../../src/platform/live/net/literal-lookup.ts';

test('after the first call (the bind), an IPv4 literal is answered before lookup returns; a repeat too', () => {
  const lookup = literalLookup();
  let bindAnswered = false;
  lookup('0.0.0.0', { family: 4 }, () => {
    bindAnswered = true;
  });
  assert.equal(bindAnswered, false, 'the first call (the bind) goes through dns.lookup, later');
  for (const address of ['127.0.0.1', '127.0.0.1', '10.1.2.3']) {
    let answered: [string, number] | undefined;
    lookup(address, { family: 4 }, (error, resolved, family) => {
      assert.equal(error, null);
      answered = [resolved, family];
    });
    assert.deepEqual(answered, [address, 4], 'called back synchronously');
  }
});

test('a host name goes through dns.lookup (asynchronously)', async () => {
  const lookup = literalLookup();
  lookup('0.0.0.0', { family: 4 }, () => {});
  let sync = true;
  const answer = await new Promise<[string, number]>((resolve, reject) => {
    lookup('localhost', { family: 4 }, (error, address, family) => {
      if (error) reject(error);
      else resolve([address, family]);
    });
    sync = false;
  });
  assert.equal(sync, false, 'not answered in the call');
  assert.equal(answer[1], 4);
  assert.match(answer[0], /^127\./);
});

test("bind keeps node:dgram's timing: 'listening' reaches a listener attached after bind()", {
  timeout: 5_000,
}, async () => {
  const socket = createSocket({ type: 'udp4', lookup: literalLookup() });
  try {
    socket.bind(0, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('listening', () => resolve()));
    assert.ok(socket.address().port > 0);
  } finally {
    socket.close();
  }
});

test('a dgram socket built with it sends to literals and to names', async () => {
  const receiver = createSocket('udp4');
  await new Promise<void>((resolve) => receiver.bind(0, '127.0.0.1', () => resolve()));
  const port = receiver.address().port;
  const got: string[] = [];
  const twoArrived = new Promise<void>((resolve) =>
    receiver.on('message', (message) => {
      got.push(message.toString());
      if (got.length === 2) resolve();
    }),
  );
  const sender = createSocket({ type: 'udp4', lookup: literalLookup() });
  try {
    sender.send(Buffer.from('literal'), port, '127.0.0.1');
    sender.send(Buffer.from('name'), port, 'localhost');
    await twoArrived;
    assert.deepEqual(got.sort(), ['literal', 'name']);
  } finally {
    sender.close();
    receiver.close();
  }
});
