/**
 * INFO's text (issue 5, §2: "INFO over RESP reports which replica leads").
 *
 * The layout is Redis's — `# Section` headers, `name:value` lines, a blank line between sections,
 * CRLF line ends — so tools that read INFO (ioredis's ready check reads `loading`, dashboards read
 * `role` and `connected_clients`) read ours. Sections: Server, Clients, Persistence, Stats,
 * Replication (role:master on the leader, role:slave with master_host/master_port on a follower)
 * and Keyspace, as in Redis, plus `# Ipipe`, filled by the backend (which replica leads, ballot,
 * shards…). Section names are matched without regard to case; `all`, `everything` and `default`
 * name every section; an unknown name gives an empty reply, as Redis does.
 */

import type { InfoFields, KvBackendInfo } from './backend.ts';
import type { RespLimits } from './limits.ts';
import { PROTOCOL_ERROR_REASONS, type RespServerStats } from './stats.ts';

/** The Redis version INFO and HELLO claim: the command set answered here is a subset of 7.0's. */
export const REDIS_COMPATIBLE_VERSION = '7.0.0';

/** What INFO needs to know about the server itself. */
export interface InfoServerView {
  readonly host: string;
  readonly port: number;
  readonly startedAtMs: number;
  readonly limits: RespLimits;
  stats(): RespServerStats;
}

/** The sections INFO can show, in the order it shows them. */
export const INFO_SECTIONS = [
  'server',
  'clients',
  'persistence',
  'stats',
  'replication',
  'keyspace',
  'ipipe',
] as const;

/** One INFO section's name. */
export type InfoSection = (typeof INFO_SECTIONS)[number];

/** Which sections the arguments of `INFO [section …]` select (lowercase names). */
export function selectInfoSections(names: readonly string[]): Set<InfoSection> {
  if (names.length === 0) return new Set(INFO_SECTIONS);
  const selected = new Set<InfoSection>();
  for (const name of names) {
    if (name === 'all' || name === 'everything' || name === 'default') return new Set(INFO_SECTIONS);
    if ((INFO_SECTIONS as readonly string[]).includes(name)) selected.add(name as InfoSection);
  }
  return selected;
}

/** Names keep to [A-Za-z0-9_]; values lose \r, \n (they would end the line). */
function fieldLines(fields: InfoFields | undefined): string {
  if (fields === undefined) return '';
  let text = '';
  for (const [name, value] of fields) {
    text += `${name.replace(/[^A-Za-z0-9_]/g, '_')}:${String(value).replace(/[\r\n]/g, ' ')}\r\n`;
  }
  return text;
}

function splitAddress(address: string): [host: string, port: string] | null {
  const colon = address.lastIndexOf(':');
  if (colon <= 0 || colon === address.length - 1) return null;
  return [address.slice(0, colon).replace(/^\[|\]$/g, ''), address.slice(colon + 1)];
}

/** INFO's reply text (a JS string; the caller encodes it as UTF-8). */
export function renderInfo(
  sections: ReadonlySet<InfoSection>,
  server: InfoServerView,
  backend: KvBackendInfo,
  dbsize: number | null,
): string {
  const stats = server.stats();
  const parts: string[] = [];
  for (const section of INFO_SECTIONS) {
    if (!sections.has(section)) continue;
    switch (section) {
      case 'server':
        parts.push(
          '# Server\r\n' +
            fieldLines([
              ['redis_version', REDIS_COMPATIBLE_VERSION],
              ['redis_mode', 'standalone'],
              ['server_name', 'ipipe-rkv'],
              ['os', `${process.platform} ${process.arch}`],
              ['process_id', process.pid],
              ['tcp_port', server.port],
              ['uptime_in_seconds', Math.floor((Date.now() - server.startedAtMs) / 1000)],
              ['executable', process.execPath],
              ['node_version', process.version],
            ]),
        );
        break;
      case 'clients':
        parts.push(
          '# Clients\r\n' +
            fieldLines([
              ['connected_clients', stats.connectionsOpen],
              ['maxclients', server.limits.maxConnections],
            ]),
        );
        break;
      case 'persistence':
        // ioredis waits while `loading` is not 0; the store answers as soon as the front is up.
        parts.push(`# Persistence\r\n${fieldLines([['loading', 0]])}`);
        break;
      case 'stats':
        parts.push(
          '# Stats\r\n' +
            fieldLines([
              ['total_connections_received', stats.connectionsAccepted],
              ['total_commands_processed', stats.commandsProcessed],
              ['total_net_input_bytes', stats.bytesReceived],
              ['total_net_output_bytes', stats.bytesSent],
              ['rejected_connections', stats.connectionsRejected],
              ['total_error_replies', stats.errorReplies],
              ['unknown_commands', stats.unknownCommands],
              ['not_leader_replies', stats.notLeaderReplies],
              ['unavailable_replies', stats.unavailableReplies],
              ['backend_errors', stats.backendErrors],
              ['read_pauses', stats.readPauses],
              ['protocol_errors', stats.protocolErrorsTotal],
              ...PROTOCOL_ERROR_REASONS.map(
                (reason) => [`protocol_errors_${reason}`, stats.protocolErrors[reason]] as const,
              ),
            ]),
        );
        break;
      case 'replication': {
        const lines: [string, string | number][] = [
          ['role', backend.role === 'follower' ? 'slave' : 'master'],
        ];
        const leader = backend.leaderAddress === undefined ? null : splitAddress(backend.leaderAddress);
        if (backend.role === 'follower' && leader !== null) {
          lines.push(['master_host', leader[0]], ['master_port', leader[1]]);
        }
        parts.push(`# Replication\r\n${fieldLines(lines)}${fieldLines(backend.replication)}`);
        break;
      }
      case 'keyspace':
        // Redis lists only non-empty databases.
        parts.push(
          '# Keyspace\r\n' +
            (dbsize !== null && dbsize > 0 ? `db0:keys=${dbsize},expires=0,avg_ttl=0\r\n` : ''),
        );
        break;
      case 'ipipe': {
        const lines: [string, string | number][] = [['ipipe_role', backend.role]];
        if (backend.leaderAddress !== undefined) lines.push(['ipipe_leader', backend.leaderAddress]);
        parts.push(`# Ipipe\r\n${fieldLines(lines)}${fieldLines(backend.ipipe)}`);
        break;
      }
    }
  }
  return parts.join('\r\n');
}
