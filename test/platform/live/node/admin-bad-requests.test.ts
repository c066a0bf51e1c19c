/**
 * The admin server (`ipipe run --metrics-port`) runs inside the node's process: a request it
 * cannot serve must get a 4xx that says what was wrong, be counted by reason, and leave the node
 * serving. Before, `GET // HTTP/1.1` made `new URL` throw inside the 'request' listener and the
 * whole node exited 1 (TypeError: Invalid URL).
 *
 * The node here is a stand-in with only what the admin server reads: what is tested is the HTTP
 * side, not the runtime (admin-metrics.test.ts drives a real node).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { ConfigError } from '../../../../src/errors.ts';
import { type AdminTarget, startAdminServer } from '../../../../src/platform/live/node/admin-server.ts';

/**
 * A node with no actors but `echo` (id 1), whose migrations are refused; once the test sets
 * `statsThrowsOnce`, its next `stats()` throws, as a bug in the node would.
 */
function standInNode(behaviour: { statsThrowsOnce: boolean } = { statsThrowsOnce: false }): AdminTarget {
  const nic = {
    table: { lookup: () => undefined, values: () => [] },
    executed: new Map(),
    migrationCounts: new Map(),
    migrations: { since: () => [], total: 0 },
    ringStats: () => [],
    hostChannelStats: () => ({ transport: 'ring', unreadBytes: 0, backlogBytes: 0, capacityBytes: 1 }),
    heldRequests: () => 0,
    coreRoles: () => ({ fcfs: 1, drr: 0 }),
    domainOf: () => 'nic',
    onReplyLatency: undefined,
  };
  return {
    nic,
    stats: () => {
      if (behaviour.statsThrowsOnce) {
        behaviour.statsThrowsOnce = false;
        throw new TypeError('stats broke');
      }
      return { drops: {} };
    },
    dropReasons: () => [],
    hostCoreStats: () => [],
    actorId: (name: string) => {
      if (name !== 'echo') throw new ConfigError('actor', `no actor named "${name}"`);
      return 1;
    },
    migrate: () => Promise.reject(new ConfigError('to', 'echo already runs on the NIC')),
  } as unknown as AdminTarget;
}

/**
 * Sends one request line (headers and body as given) on a fresh TCP connection, as `fetch` would
 * never send it, and resolves with everything the server wrote back before it closed the socket
 * (`Connection: close` unless `keepAlive`: then only the server's own choice closes it).
 */
function rawRequest(
  port: number,
  requestLine: string,
  options: { readonly headers?: string; readonly body?: string; readonly keepAlive?: boolean } = {},
): Promise<string> {
  const connection = options.keepAlive ? '' : 'Connection: close\r\n';
  return new Promise((resolve, reject) => {
    let reply = '';
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `${requestLine}\r\nHost: x\r\n${connection}${options.headers ?? ''}\r\n${options.body ?? ''}`,
      ),
    );
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
    });
    socket.on('close', () => resolve(reply));
    socket.on('error', reject);
  });
}

function statusOf(reply: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1]);
}

function bodyOf(reply: string): { error: string; reason: string; code?: string } {
  return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
}

function refusedCount(metrics: string, reason: string): number | undefined {
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`ipipe_admin_requests_refused_total{reason="${reason}"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('a request target that is no URL (`//`, `http://[`) is answered, counted, and the node keeps serving', async () => {
  const admin = await startAdminServer(standInNode(), 0);
  const base = `http://${admin.address}:${admin.port}`;
  try {
    // `//` is a path (RFC 9112's origin-form allows empty segments): one the server does not serve.
    const slashes = await rawRequest(admin.port, 'GET // HTTP/1.1');
    assert.equal(statusOf(slashes), 404, slashes);
    assert.match(bodyOf(slashes).error, /no endpoint at \/\/; GET \/metrics, GET \/stats, POST \/migrate/);
    // `//stats` would have been read as the host "stats" and served "/": it is the path //stats.
    assert.equal(statusOf(await rawRequest(admin.port, 'GET //stats HTTP/1.1')), 404);

    const unparsable = await rawRequest(admin.port, 'GET http://[ HTTP/1.1');
    assert.equal(statusOf(unparsable), 400, unparsable);
    assert.deepEqual(bodyOf(unparsable).reason, 'bad-target');
    assert.match(bodyOf(unparsable).error, /the request target "http:\/\/\[" is not a URL path/);

    const stats = await fetch(`${base}/stats`);
    assert.equal(stats.status, 200, 'the server still serves');
    const after = await (await fetch(`${base}/metrics`)).text();
    assert.equal(refusedCount(after, 'not-found'), 2);
    assert.equal(refusedCount(after, 'bad-target'), 1);
  } finally {
    await admin.close();
  }
});

test('a wrong method gets 405 with Allow; a body (JSON or huge) gets 413 and the socket closed; none reaches the node', {
  timeout: 20_000,
}, async () => {
  const admin = await startAdminServer(standInNode(), 0);
  const base = `http://${admin.address}:${admin.port}`;
  try {
    const put = await fetch(`${base}/metrics`, { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET');
    assert.match(((await put.json()) as { error: string }).error, /\/metrics takes GET, not PUT/);
    const getMigrate = await fetch(`${base}/migrate?actor=echo&to=host`);
    assert.equal(getMigrate.status, 405);
    assert.equal(getMigrate.headers.get('allow'), 'POST');

    const json = await fetch(`${base}/migrate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"actor": "echo", "to": ',
    });
    assert.equal(json.status, 413);
    assert.match(
      ((await json.json()) as { error: string }).error,
      /takes no request body: give the actor and the target in the query, POST \/migrate\?actor=<name>&to=nic\|host/,
    );

    // A gigabyte announced, a few bytes sent: answered at once and the connection closed by the
    // server (which would otherwise wait for the rest, to read past it): the rest is never read.
    const huge = await rawRequest(admin.port, 'POST /migrate?actor=echo&to=host HTTP/1.1', {
      headers: 'Content-Length: 1000000000\r\n',
      body: '{"a":',
      keepAlive: true,
    });
    assert.equal(statusOf(huge), 413, huge);
    assert.match(huge, /\r\nconnection: close\r\n/i);

    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.equal(refusedCount(metrics, 'method-not-allowed'), 2);
    assert.equal(refusedCount(metrics, 'body-not-accepted'), 2);
  } finally {
    await admin.close();
  }
});

test('/migrate refusals are counted by reason; a handler that throws gets 500, the node keeps serving', async () => {
  const behaviour = { statsThrowsOnce: false };
  const admin = await startAdminServer(standInNode(behaviour), 0);
  const base = `http://${admin.address}:${admin.port}`;
  try {
    // Every reason is a series from the start, as drops are: "none refused" is not "not exported".
    const fresh = await (await fetch(`${base}/metrics`)).text();
    for (const reason of [
      'bad-target',
      'not-found',
      'method-not-allowed',
      'body-not-accepted',
      'bad-query',
      'unknown-actor',
      'migration-refused',
      'internal',
    ])
      assert.equal(refusedCount(fresh, reason), 0, `${reason} is exported at 0`);

    const badTo = await fetch(`${base}/migrate?actor=echo&to=moon`, { method: 'POST' });
    assert.equal(badTo.status, 400);
    const unknown = await fetch(`${base}/migrate?actor=nobody&to=host`, { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: string }).error, /no actor named "nobody"/);
    const refused = await fetch(`${base}/migrate?actor=echo&to=nic`, { method: 'POST' });
    assert.equal(refused.status, 409);
    assert.equal(((await refused.json()) as { code: string }).code, 'IPIPE_ERR_CONFIG_INVALID');

    behaviour.statsThrowsOnce = true;
    const broken = await fetch(`${base}/stats`);
    assert.equal(broken.status, 500);
    assert.match(
      ((await broken.json()) as { error: string }).error,
      /failed on this request: TypeError: stats broke/,
    );

    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200, 'still serving');
    const text = await metrics.text();
    assert.equal(refusedCount(text, 'bad-query'), 1);
    assert.equal(refusedCount(text, 'unknown-actor'), 1);
    assert.equal(refusedCount(text, 'migration-refused'), 1);
    assert.equal(refusedCount(text, 'internal'), 1);
  } finally {
    await admin.close();
  }
});
