/**
 * A live node's HTTP side door: Prometheus metrics (`GET /metrics`, prom-client's text format),
 * a JSON snapshot (`GET /stats`), and forced migration (`POST /migrate?actor=<name>&to=nic|host`,
 * what `ipipe migrate` calls). Metrics are read from the node when scraped — nothing is counted
 * twice on the request path. A request it cannot serve (a target that is no URL, an unknown path or
 * method, a body) gets a 4xx with a JSON `{ error, reason }` and is counted
 * (`ipipe_admin_requests_refused_total`); nothing a request holds can throw out of the server and
 * stop the node it runs in.
 */

import { createServer, type Server } from 'node:http';
import client from 'prom-client';
import { IpipeError } from '../../../errors.ts';
import { ActorLatencySummary } from './latency-summary.ts';
import type { LiveNode } from './live-node.ts';

export interface AdminServer {
  readonly port: number;
  readonly address: string;
  close(): Promise<void>;
}

/** What the admin server reads and drives: a whole `LiveNode`, or a split node's NIC domain (`nicDomainNode`). */
export type AdminTarget = Pick<
  LiveNode,
  'nic' | 'stats' | 'dropReasons' | 'hostCoreStats' | 'actorId' | 'migrate'
>;

const DOMAIN_CODE: Readonly<Record<string, number>> = { nic: 0, host: 1, migrating: 2 };

/** A node's metrics: its registry, and `close` to stop recording (the latency window's clock). */
export interface NodeMetrics {
  readonly registry: client.Registry;
  close(): void;
}

/** Registers the node's metrics in a fresh registry. */
export function nodeMetrics(node: AdminTarget): NodeMetrics {
  const registry = new client.Registry();
  const nic = node.nic;
  const latency = new ActorLatencySummary(
    registry,
    (actor) => nic.table.lookup(actor)?.name ?? String(actor),
  );
  nic.onReplyLatency = (actor, seconds) => latency.record(actor, seconds);

  const lastCounts = new Map<string, number>();
  /** Counters read from the node's totals: increment by what changed since the last scrape. */
  const sync = (
    counter: client.Counter<string>,
    key: string,
    labels: Record<string, string>,
    total: number,
  ) => {
    const previous = lastCounts.get(key) ?? 0;
    if (total > previous) counter.inc(labels, total - previous);
    lastCounts.set(key, total);
  };

  const executed = new client.Counter({
    name: 'ipipe_requests_executed_total',
    help: 'Requests executed, by actor and the domain that ran them.',
    labelNames: ['actor', 'domain'],
    registers: [registry],
    collect() {
      for (const [id, counts] of nic.executed) {
        const actor = nic.table.lookup(id)?.name ?? String(id);
        sync(this, `exec/${actor}/nic`, { actor, domain: 'nic' }, counts.nic);
        sync(this, `exec/${actor}/host`, { actor, domain: 'host' }, counts.host);
      }
    },
  });
  const drops = new client.Counter({
    name: 'ipipe_drops_total',
    help: 'Frames and requests refused, by reason.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      // Both domains' drops (the host's prefixed host-), as LiveNode.stats reports them.
      for (const [reason, count] of Object.entries(node.stats().drops))
        sync(this, `drop/${reason}`, { reason }, count);
    },
  });
  // Every reason the node counts is a series from the start: with none before the first drop, a
  // dashboard or an alert could not tell "nothing dropped" from "not exported".
  for (const reason of node.dropReasons()) drops.inc({ reason }, 0);
  const replies = new client.Counter({
    name: 'ipipe_replies_total',
    help: 'Replies sent to clients, by kind.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      sync(this, 'reply/ok', { kind: 'reply' }, nic.replies);
      sync(this, 'reply/error', { kind: 'error' }, nic.errorReplies);
      sync(this, 'reply/duplicate', { kind: 'duplicate' }, nic.duplicates);
    },
  });
  const migrations = new client.Counter({
    name: 'ipipe_migrations_total',
    help: 'Completed migrations, by actor and direction.',
    labelNames: ['actor', 'to'],
    registers: [registry],
    collect() {
      for (const [key, entry] of nic.migrationCounts)
        sync(this, `mig/${key}`, { actor: entry.actor, to: entry.to }, entry.count);
    },
  });
  // As for drops: every series the node can count exists from the start, at 0 — per actor of the
  // catalog (executions on either domain, migrations either way) and per reply kind.
  for (const entry of nic.table.values()) {
    if (entry.location.domain === 'remote') continue; // another node of the cluster runs it
    for (const domain of ['nic', 'host']) {
      executed.inc({ actor: entry.name, domain }, 0);
      migrations.inc({ actor: entry.name, to: domain }, 0);
    }
  }
  for (const kind of ['reply', 'error', 'duplicate']) replies.inc({ kind }, 0);
  let phasesSeen = 0;
  new client.Summary({
    name: 'ipipe_migration_phase_seconds',
    help: 'Duration of each migration phase (prepare, ready, gone, clean).',
    labelNames: ['phase'],
    percentiles: [0.5, 0.99],
    registers: [registry],
    collect() {
      // Each completed migration is observed once, at the first scrape after it (one trimmed from
      // the node's recent list before a scrape saw it is not observed: 256 between two scrapes).
      const items = nic.migrations.since(phasesSeen);
      phasesSeen = nic.migrations.total;
      for (const m of items) {
        for (const [phase, ms] of Object.entries(m.phasesMs)) this.observe({ phase }, ms / 1000);
      }
    },
  });
  new client.Gauge({
    name: 'ipipe_actor_domain',
    help: 'Where each actor runs: 0 NIC, 1 host, 2 migrating.',
    labelNames: ['actor'],
    registers: [registry],
    collect() {
      for (const entry of nic.table.values())
        this.set({ actor: entry.name }, DOMAIN_CODE[nic.domainOf(entry.id)] ?? -1);
    },
  });
  new client.Gauge({
    name: 'ipipe_ring_occupancy_bytes',
    help: 'Bytes waiting in each NIC core ring.',
    labelNames: ['core', 'ring'],
    registers: [registry],
    collect() {
      for (const ring of nic.ringStats()) {
        this.set({ core: String(ring.core), ring: 'work' }, ring.workBytes);
        this.set({ core: String(ring.core), ring: 'result' }, ring.resultBytes);
      }
    },
  });
  // The host domain's cores, as the NIC's above: their rings, and the per-core queues the host
  // steers requests into (an actor's core, or the shortest queue for a non-exclusive one), where a
  // slow host core shows before its ring fills.
  new client.Gauge({
    name: 'ipipe_host_ring_occupancy_bytes',
    help: 'Bytes waiting in each host core ring.',
    labelNames: ['core', 'ring'],
    registers: [registry],
    collect() {
      for (const core of node.hostCoreStats()) {
        this.set({ core: String(core.core), ring: 'work' }, core.workBytes);
        this.set({ core: String(core.core), ring: 'result' }, core.resultBytes);
      }
    },
  });
  new client.Gauge({
    name: 'ipipe_host_core_requests',
    help: 'Requests each host core has: queued for it (waiting for room in its ring) and held (handed to it, running or in its ring).',
    labelNames: ['core', 'state'],
    registers: [registry],
    collect() {
      for (const core of node.hostCoreStats()) {
        this.set({ core: String(core.core), state: 'queued' }, core.queuedRequests);
        this.set({ core: String(core.core), state: 'held' }, core.heldRequests);
      }
    },
  });
  // The ring between the domains, apart from the NIC cores' rings above: in one process the SPSC
  // ring of issue 4, in a split node a TCP connection; back-pressure shows here first (unread),
  // then as the NIC's backlog, which grows instead of dropping.
  new client.Gauge({
    name: 'ipipe_host_channel_bytes',
    help: 'NIC→host channel: bytes sent the host has not taken yet (unread) and bytes waiting in the NIC for room (backlog).',
    labelNames: ['state', 'transport'],
    registers: [registry],
    collect() {
      const channel = nic.hostChannelStats();
      this.set({ state: 'unread', transport: channel.transport }, channel.unreadBytes);
      this.set({ state: 'backlog', transport: channel.transport }, channel.backlogBytes);
    },
  });
  new client.Gauge({
    name: 'ipipe_host_channel_capacity_bytes',
    help: 'NIC→host channel: bytes it holds before sends wait (ring size, or the TCP socket high-water mark).',
    labelNames: ['transport'],
    registers: [registry],
    collect() {
      const channel = nic.hostChannelStats();
      this.set({ transport: channel.transport }, channel.capacityBytes);
    },
  });
  new client.Gauge({
    name: 'ipipe_scheduler_queue_requests',
    help: 'Requests held by the NIC scheduler (shared queue, mailboxes, migration buffers, running).',
    registers: [registry],
    collect() {
      this.set(nic.heldRequests());
    },
  });
  new client.Gauge({
    name: 'ipipe_cores',
    help: 'NIC cores by scheduler role.',
    labelNames: ['role'],
    registers: [registry],
    collect() {
      const roles = nic.coreRoles();
      this.set({ role: 'fcfs' }, roles.fcfs);
      this.set({ role: 'drr' }, roles.drr);
    },
  });
  return {
    registry,
    close() {
      latency.close();
      nic.onReplyLatency = undefined;
    },
  };
}

/** The admin endpoints and the one method each answers. */
const ROUTES: Readonly<Record<string, string>> = { '/metrics': 'GET', '/stats': 'GET', '/migrate': 'POST' };
const USAGE = 'GET /metrics, GET /stats, POST /migrate?actor=<name>&to=nic|host\n';

/**
 * Why the admin server answered a request with an error, the `reason` of
 * `ipipe_admin_requests_refused_total` (each exported from the start at 0, as drops are):
 * - `bad-target`: the request target is not a URL (`GET http://[ HTTP/1.1`);
 * - `not-found`: no endpoint at that path;
 * - `method-not-allowed`: an endpoint asked with another method than its own (405 with `Allow`);
 * - `body-not-accepted`: the request carries a body, which no endpoint reads (413);
 * - `bad-query`: POST /migrate without `to=nic|host`;
 * - `unknown-actor`: POST /migrate for an actor the node does not run;
 * - `migration-refused`: the node refused the move (already there, another move under way, …);
 * - `internal`: the server itself failed (500); the node keeps serving.
 */
export const ADMIN_REFUSAL_REASONS = [
  'bad-target',
  'not-found',
  'method-not-allowed',
  'body-not-accepted',
  'bad-query',
  'unknown-actor',
  'migration-refused',
  'internal',
] as const;
export type AdminRefusalReason = (typeof ADMIN_REFUSAL_REASONS)[number];

/**
 * The request target as a URL, or undefined where it is none. An origin-form target (RFC 9112
 * §3.2.1, every request but a proxy's) is a path and is joined to the origin, not resolved against
 * it: resolved, `//x` would read as a host and `//` throw (it did, from inside the 'request'
 * listener, which took the whole node down). Other forms (absolute `http://…`, `*`) are parsed as
 * they are and may fail.
 */
function requestUrl(target: string): URL | undefined {
  try {
    return target.startsWith('/')
      ? new URL(`http://localhost${target}`)
      : new URL(target, 'http://localhost/');
  } catch {
    return undefined;
  }
}

/** Replies with `status` and `body`. */
type Send = (status: number, type: string, body: string, headers?: Record<string, string>) => void;
/** Replies with an error `{ error, reason, code? }` and counts it under `reason`. */
type Refuse = (
  reason: AdminRefusalReason,
  status: number,
  error: string,
  extra?: { readonly code?: string | undefined; readonly headers?: Record<string, string> },
) => void;

/** Whether the request carries a body: a length above 0, or a transfer coding (chunked). */
function hasBody(headers: {
  readonly 'content-length'?: string | undefined;
  readonly 'transfer-encoding'?: string | undefined;
}): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length.trim() !== '0') || headers['transfer-encoding'] !== undefined;
}

/** Serves /metrics, /stats and /migrate for `node` on `port` (0: any free port). */
export async function startAdminServer(
  node: AdminTarget,
  port: number,
  address = '127.0.0.1',
): Promise<AdminServer> {
  const metrics = nodeMetrics(node);
  const registry = metrics.registry;
  const refusals = new client.Counter({
    name: 'ipipe_admin_requests_refused_total',
    help: 'Admin HTTP requests (/metrics, /stats, /migrate) answered with an error, by reason.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ADMIN_REFUSAL_REASONS) refusals.inc({ reason }, 0);

  const server: Server = createServer((request, response) => {
    const send: Send = (status, type, body, headers = {}) => {
      if (response.headersSent) {
        // Too late for a status: end what was begun rather than write a second head (which throws).
        response.destroy();
        return;
      }
      response.writeHead(status, {
        'content-type': type,
        'content-length': Buffer.byteLength(body),
        ...headers,
      });
      response.end(body);
    };
    const refuse: Refuse = (reason, status, error, extra = {}) => {
      refusals.inc({ reason });
      send(
        status,
        'application/json',
        JSON.stringify({ error, reason, ...(extra.code === undefined ? {} : { code: extra.code }) }),
        extra.headers,
      );
    };
    // Whatever a request holds, nothing it causes may escape this listener: an exception thrown
    // here is uncaught in the node's process, and one bad request would stop every actor it runs.
    try {
      handle(request.method ?? '', request.url ?? '/', request.headers, send, refuse);
    } catch (error) {
      refuse('internal', 500, `the admin server failed on this request: ${String(error)}`);
    }
  });

  function handle(
    method: string,
    target: string,
    headers: Parameters<typeof hasBody>[0],
    send: Send,
    refuse: Refuse,
  ): void {
    const url = requestUrl(target);
    if (url === undefined) {
      refuse(
        'bad-target',
        400,
        `the request target ${JSON.stringify(target)} is not a URL path; ${USAGE.trim()}`,
      );
      return;
    }
    const allowed = ROUTES[url.pathname];
    if (allowed === undefined) {
      refuse('not-found', 404, `no endpoint at ${url.pathname}; ${USAGE.trim()}`);
      return;
    }
    if (method !== allowed) {
      refuse('method-not-allowed', 405, `${url.pathname} takes ${allowed}, not ${method}`, {
        headers: { allow: allowed },
      });
      return;
    }
    if (hasBody(headers)) {
      // No endpoint reads a body; refused rather than drained, so that a large one costs nothing
      // (`connection: close`: Node closes the socket after the reply instead of reading the rest).
      refuse(
        'body-not-accepted',
        413,
        `${url.pathname} takes no request body${url.pathname === '/migrate' ? ': give the actor and the target in the query, POST /migrate?actor=<name>&to=nic|host' : ''}`,
        { headers: { connection: 'close' } },
      );
      return;
    }
    if (url.pathname === '/metrics') {
      registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        (error: unknown) => refuse('internal', 500, `cannot render the metrics: ${String(error)}`),
      );
      return;
    }
    if (url.pathname === '/stats') {
      send(200, 'application/json', JSON.stringify({ schemaVersion: 1, ...node.stats() }));
      return;
    }
    const actorName = url.searchParams.get('actor') ?? '';
    const to = url.searchParams.get('to');
    if (to !== 'nic' && to !== 'host') {
      refuse('bad-query', 400, 'to must be nic or host: POST /migrate?actor=<name>&to=nic|host');
      return;
    }
    let actor: ReturnType<LiveNode['actorId']>;
    try {
      actor = node.actorId(actorName);
    } catch (error) {
      refuse('unknown-actor', 404, (error as Error).message);
      return;
    }
    node.migrate(actor, to).then(
      (record) => send(200, 'application/json', JSON.stringify({ schemaVersion: 1, migration: record })),
      (error: unknown) =>
        refuse('migration-refused', 409, error instanceof Error ? error.message : String(error), {
          code: error instanceof IpipeError ? error.code : undefined,
        }),
    );
  }

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
  } catch (error) {
    metrics.close(); // nothing will scrape it: stop recording into it
    throw error;
  }
  const bound = server.address();
  return {
    port: typeof bound === 'object' && bound ? bound.port : port,
    address,
    close: () =>
      new Promise((resolve) => {
        metrics.close();
        server.close(() => resolve());
      }),
  };
}
