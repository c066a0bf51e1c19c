/**
 * WHAT-IF EXPERIMENT, not part of ipipe (docs/live-echo-path.md, "Sharing the node's socket with a
 * worker"): can worker threads share the node's UDP socket on Node 20, which has no reusePort?
 *
 *   npx tsx bench/what-if/socket-sharing.ts
 *
 * 1. reusePort: a second socket with `reusePort: true` on a bound port (EADDRINUSE: ignored).
 * 2. Three workers wrap one socket the main thread bound (`bind({ fd })` on the private
 *    `_handle.fd`): how a burst of datagrams is shared among them.
 * 3. A worker wrapping the socket is terminated (the watchdog's action): is the descriptor still
 *    open, and can a new worker wrap it again?
 * 4. A warm spare: a worker already started is told to bind the port of a core just terminated;
 *    how long until the port answers again?
 */

import dgram from 'node:dgram';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

// Plain JavaScript (eval'd): wraps the descriptor, answers every datagram, counts them.
const WRAPPER = `
const { workerData, parentPort } = require('node:worker_threads');
const dgram = require('node:dgram');
const socket = dgram.createSocket('udp4');
socket.on('error', (error) => parentPort.postMessage({ error: error.code ?? error.message }));
try {
  socket.bind({ fd: workerData.fd }, () => {
    parentPort.postMessage({ ready: true });
    socket.on('message', (message, remote) => {
      parentPort.postMessage({ got: workerData.index });
      socket.send(message, remote.port, remote.address);
    });
  });
} catch (error) {
  parentPort.postMessage({ error: error.code ?? error.message });
}
`;

interface Handle {
  fd: number;
  recvStop(): void;
}

type WrapperMessage = { ready?: true; got?: number; error?: string };

function wrap(fd: number, index: number, onMessage: (m: WrapperMessage) => void): Promise<Worker> {
  return new Promise((resolve) => {
    const worker = new Worker(WRAPPER, { eval: true, workerData: { fd, index } });
    worker.on('message', (m: WrapperMessage) => {
      onMessage(m);
      if (m.ready || m.error) resolve(worker);
    });
    worker.on('error', (error) => {
      onMessage({ error: (error as NodeJS.ErrnoException).code ?? error.message });
      resolve(worker);
    });
  });
}

async function bound(): Promise<{ socket: dgram.Socket; port: number; handle: Handle }> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const handle = (socket as unknown as { _handle: Handle })._handle;
  handle.recvStop(); // only the workers read it
  return { socket, port: socket.address().port, handle };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function reusePort(): Promise<string> {
  const first = dgram.createSocket({ type: 'udp4', reusePort: true } as dgram.SocketOptions);
  await new Promise<void>((resolve) => first.bind(0, '127.0.0.1', resolve));
  const second = dgram.createSocket({ type: 'udp4', reusePort: true } as dgram.SocketOptions);
  const outcome = await new Promise<string>((resolve) => {
    second.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    second.bind(first.address().port, '127.0.0.1', () => resolve('bound'));
  });
  first.close();
  second.close();
  return outcome;
}

async function share(): Promise<number[]> {
  const { socket, port, handle } = await bound();
  const counts = [0, 0, 0];
  const workers: Worker[] = [];
  for (let index = 0; index < counts.length; index++)
    workers.push(
      await wrap(handle.fd, index, (m) => {
        if (m.got !== undefined) counts[m.got]! += 1;
      }),
    );
  const client = dgram.createSocket('udp4');
  for (let i = 0; i < 3000; i++) {
    client.send('x', port, '127.0.0.1');
    if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
  await pause(1000);
  client.close();
  for (const worker of workers) await worker.terminate();
  void socket;
  return counts;
}

async function terminate(): Promise<{ fdAfter: string; rewrap: string }> {
  const { port, handle } = await bound();
  const first = await wrap(handle.fd, 0, () => {});
  await first.terminate();
  let fdAfter: string;
  try {
    fdAfter = fs.readlinkSync(`/proc/self/fd/${handle.fd}`);
  } catch (error) {
    fdAfter = (error as NodeJS.ErrnoException).code ?? 'unreadable';
  }
  let rewrap = 'no answer';
  const second = await wrap(handle.fd, 1, (m) => {
    if (m.ready) rewrap = 'wrapped again';
    if (m.error) rewrap = m.error;
  });
  await second.terminate();
  void port;
  return { fdAfter, rewrap };
}

// Plain JavaScript (eval'd): waits, then binds the port it is given and echoes.
const SPARE = `
const { parentPort } = require('node:worker_threads');
const dgram = require('node:dgram');
parentPort.on('message', ({ port }) => {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => socket.send(message, remote.port, remote.address));
  socket.bind(port, '127.0.0.1', () => parentPort.postMessage('bound'));
});
parentPort.postMessage('ready');
`;

function startSpare(): Promise<Worker> {
  return new Promise((resolve) => {
    const worker = new Worker(SPARE, { eval: true });
    worker.once('message', () => resolve(worker));
  });
}

function nextMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve) => worker.once('message', resolve));
}

async function spareTakesOver(): Promise<string> {
  const probe = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
  const port = probe.address().port;
  probe.close();
  const core = await startSpare();
  core.postMessage({ port });
  await nextMessage(core);
  const spare = await startSpare();
  const killedAt = performance.now();
  await core.terminate();
  const terminatedAt = performance.now();
  spare.postMessage({ port });
  await nextMessage(spare);
  const boundAt = performance.now();
  const client = dgram.createSocket('udp4');
  const echoed = new Promise((resolve) => client.once('message', resolve));
  client.send('x', port, '127.0.0.1');
  await echoed;
  const answeredAt = performance.now();
  client.close();
  await spare.terminate();
  return (
    `terminate ${(terminatedAt - killedAt).toFixed(1)} ms, spare bound after ${(boundAt - terminatedAt).toFixed(1)} ms, ` +
    `first echo ${(answeredAt - boundAt).toFixed(1)} ms later`
  );
}

process.stdout.write(`node ${process.version}\n`);
process.stdout.write(`1. second bind with reusePort: ${await reusePort()}\n`);
const counts = await share();
process.stdout.write(
  `2. 3 000 datagrams over three workers wrapping one fd: ${counts.join(' / ')} (sum ${counts.reduce((a, b) => a + b, 0)})\n`,
);
const { fdAfter, rewrap } = await terminate();
process.stdout.write(
  `3. after terminating the wrapping worker: fd is ${fdAfter}; a new wrapper: ${rewrap}\n`,
);
for (let i = 0; i < 5; i++) process.stdout.write(`4. warm spare: ${await spareTakesOver()}\n`);
process.exit(0);
