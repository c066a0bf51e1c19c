/**
 * What a live NIC remembers about the clients it answers, bounded.
 *
 * Per client id: its latest endpoint (to relay another node's answer to it). Per endpoint
 * (`address:port`): the client id it talks as, whether it talks to this node itself, and — for a
 * client of another node whose requests reach an actor here — the peer to send answers back
 * through. Before this table, four maps held these and only ever grew: a long-running node kept
 * one entry per client id it had ever seen (every `ipipe load` run, every restarted client
 * process). Entries now carry when they were last used; the management tick sweeps out those idle
 * for `idleMs`, and an insert past `limit` sweeps at once and, if every entry is recent, evicts the
 * least recently inserted. A client whose entry went away is simply learned again from its next
 * datagram; the one thing lost is a relay that arrives for an evicted client — dropped and
 * counted (`relay-unknown-client`); its client retries, as over any lossy UDP path.
 */

import type { NetworkEndpoint } from '../../../actor/envelope.ts';
import { ConfigError } from '../../../errors.ts';
import type { LiveClient } from './live-request.ts';

/** A cluster peer's UDP address (the entry node of another node's client). */
export interface RelayPeer {
  readonly address: string;
  readonly port: number;
}

interface EndpointEntry {
  clientId: number;
  /** The client talks to this node itself (answered directly, never relayed). */
  own: boolean;
  via: RelayPeer | undefined;
  seenMs: number;
}

interface ClientEntry extends LiveClient {
  seenMs: number;
}

export interface ClientDirectoryOptions {
  /** Most client ids (and, separately, endpoints) remembered at once. */
  readonly limit: number;
  /** An entry unused for this long is forgotten at the next sweep. */
  readonly idleMs: number;
}

export const DEFAULT_CLIENT_DIRECTORY: ClientDirectoryOptions = { limit: 65_536, idleMs: 120_000 };

export function endpointKey(endpoint: { readonly address: string; readonly port: number }): string {
  return `${endpoint.address}:${endpoint.port}`;
}

export class ClientDirectory {
  readonly #limit: number;
  readonly #idleMs: number;
  readonly #clients = new Map<number, ClientEntry>();
  readonly #endpoints = new Map<string, EndpointEntry>();
  #lastSweepMs = Number.NEGATIVE_INFINITY;
  /** Entries removed so far (idle or over the limit). */
  evicted = 0;

  constructor(options: ClientDirectoryOptions = DEFAULT_CLIENT_DIRECTORY) {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new ConfigError('clientDirectory.limit', `must be a positive integer, got ${options.limit}`);
    }
    if (!(options.idleMs > 0)) {
      throw new ConfigError(
        'clientDirectory.idleMs',
        `must be a positive number of ms, got ${options.idleMs}`,
      );
    }
    this.#limit = options.limit;
    this.#idleMs = options.idleMs;
  }

  get clientCount(): number {
    return this.#clients.size;
  }

  get endpointCount(): number {
    return this.#endpoints.size;
  }

  /**
   * The client `clientId` talking to this node from `address:port`: its record, made anew only
   * when the id is new or has moved to another endpoint. The endpoint now talks as `clientId` (a
   * client restarted on the same port gets a new id).
   */
  ownClient(clientId: number, address: string, port: number, nowMs: number): LiveClient {
    let client = this.#clients.get(clientId);
    if (client === undefined || client.endpoint.port !== port || client.endpoint.address !== address) {
      const endpoint: NetworkEndpoint = { address, port };
      client = { clientId, endpoint, key: endpointKey(endpoint), seenMs: nowMs };
      if (this.#clients.delete(clientId) || this.#clients.size < this.#limit)
        this.#clients.set(clientId, client);
      else {
        this.#makeRoom(this.#clients, nowMs);
        this.#clients.set(clientId, client);
      }
    } else client.seenMs = nowMs;
    const entry = this.#endpoints.get(client.key);
    if (entry === undefined)
      this.#addEndpoint(client.key, { clientId, own: true, via: undefined, seenMs: nowMs });
    else {
      entry.clientId = clientId;
      entry.own = true;
      entry.seenMs = nowMs;
    }
    return client;
  }

  /**
   * A request from another node carries the client `clientId` at `endpoint`; unless that client
   * talks to this node itself, answers to it go back through `via`.
   */
  noteRelayed(endpoint: NetworkEndpoint, clientId: number, via: RelayPeer, nowMs: number): void {
    const key = endpointKey(endpoint);
    const entry = this.#endpoints.get(key);
    if (entry === undefined) {
      this.#addEndpoint(key, {
        clientId,
        own: false,
        via: { address: via.address, port: via.port },
        seenMs: nowMs,
      });
      return;
    }
    if (entry.own) return;
    entry.clientId = clientId;
    if (entry.via === undefined || entry.via.port !== via.port || entry.via.address !== via.address) {
      entry.via = { address: via.address, port: via.port };
    }
    entry.seenMs = nowMs;
  }

  /** The endpoint the client `clientId` last talked to this node from. */
  endpointOf(clientId: number): NetworkEndpoint | undefined {
    return this.#clients.get(clientId)?.endpoint;
  }

  /** The client id the endpoint `key` talks as (0: unknown). */
  clientIdAt(key: string): number {
    return this.#endpoints.get(key)?.clientId ?? 0;
  }

  /** The peer to send answers for the endpoint `key` through, when its client belongs to another node. */
  relayFor(key: string): RelayPeer | undefined {
    const entry = this.#endpoints.get(key);
    return entry === undefined || entry.own ? undefined : entry.via;
  }

  /** Forgets entries idle for `idleMs`, at most every quarter of that; returns how many went. */
  sweep(nowMs: number): number {
    if (nowMs - this.#lastSweepMs < this.#idleMs / 4) return 0;
    this.#lastSweepMs = nowMs;
    return this.#forgetIdle(nowMs);
  }

  #forgetIdle(nowMs: number): number {
    const before = nowMs - this.#idleMs;
    let gone = 0;
    for (const [id, client] of this.#clients) {
      if (client.seenMs < before) {
        this.#clients.delete(id);
        gone++;
      }
    }
    for (const [key, entry] of this.#endpoints) {
      if (entry.seenMs < before) {
        this.#endpoints.delete(key);
        gone++;
      }
    }
    this.evicted += gone;
    return gone;
  }

  #addEndpoint(key: string, entry: EndpointEntry): void {
    if (this.#endpoints.size >= this.#limit) this.#makeRoom(this.#endpoints, entry.seenMs);
    this.#endpoints.set(key, entry);
  }

  /** Room for one more in a full table: the idle go first, then the least recently inserted. */
  #makeRoom(table: Map<number, ClientEntry> | Map<string, EndpointEntry>, nowMs: number): void {
    this.#lastSweepMs = nowMs;
    this.#forgetIdle(nowMs);
    if (table.size < this.#limit) return;
    // Everything is recent: drop the oldest eighth so a burst of new clients does not sweep per insert.
    let excess = table.size - this.#limit + 1 + (this.#limit >> 3);
    for (const key of table.keys()) {
      if (excess-- <= 0) break;
      table.delete(key as never);
      this.evicted++;
    }
  }
}
