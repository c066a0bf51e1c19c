/**
 * A `lookup` for node:dgram sockets that answers IPv4 literals at once.
 *
 * node:dgram resolves the destination of every `send` through `dns.lookup`, which checks an IP
 * literal with a regular expression and calls back on the next tick — so each reply the live node
 * sends paid a regex match, a closure and a trip through the tick queue before its `sendmsg`
 * (~1.5% of the node's CPU under the echo bench's load, `perf`). A server replies to the addresses
 * its requests came from: IPv4 literals node:dgram itself produced, and for a given client the same
 * string each time. This answers a literal synchronously (node:dgram's connected-socket path calls
 * back synchronously too), remembering the last one so a repeat is a string compare; a host name,
 * or anything else, goes to `dns.lookup` as before.
 */

import { lookup as dnsLookup, type LookupOneOptions } from 'node:dns';
import { isIPv4 } from 'node:net';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string, family: number) => void;

/** What `dgram.createSocket({ type: 'udp4', lookup })` takes. */
export type DgramLookup = (hostname: string, options: LookupOneOptions, callback: LookupCallback) => void;

/**
 * A lookup with its own one-entry memory (one per socket). Its first call — always the socket's
 * bind, explicit or implied by a first send — goes through `dns.lookup` as before, so `bind()`
 * keeps its asynchronous 'listening' and errors (answered synchronously, a listener attached just
 * after `bind()` would miss them). node:dgram passes the family (4 or 6) as `options`.
 */
export function literalLookup(): DgramLookup {
  let lastLiteral = '';
  let bound = false;
  return (hostname, options, callback) => {
    if (!bound) {
      bound = true;
      dnsLookup(hostname, options, callback);
      return;
    }
    if (hostname === lastLiteral) {
      callback(null, hostname, 4);
      return;
    }
    if (isIPv4(hostname)) {
      lastLiteral = hostname;
      callback(null, hostname, 4);
      return;
    }
    dnsLookup(hostname, options, callback);
  };
}
