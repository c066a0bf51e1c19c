/**
 * The commands the RESP front answers, and how (issue 5, §2): the table (name, arity, flags, key
 * positions — what `COMMAND` reports), the case-insensitive lookup, and one handler per command.
 *
 * Covered: GET, SET (NX/XX; KEEPTTL accepted; EX/PX/EXAT/PXAT and GET refused, see below), DEL,
 * EXISTS, MGET, PING, ECHO, INFO, DBSIZE, SCAN (MATCH, COUNT, TYPE string; where the backend
 * scans: cursors are opaque numbers, scan-cursors.ts), SELECT (0 only), COMMAND (COUNT/INFO/LIST/DOCS), CONFIG
 * GET, CLIENT (SETNAME/GETNAME/ID/SETINFO), HELLO (protocol 2), AUTH, QUIT. Anything else gets
 * Redis's own `-ERR unknown command 'x', with args beginning with: 'a' 'b' `.
 *
 * Expiry. RKV's keys do not expire: a TTL in a replicated log needs a replicated clock, which the
 * store does not have. So SET with EX/PX/EXAT/PXAT is refused with a clear error rather than
 * stored without its TTL (a cache that never expires is a silent bug); the option is still parsed
 * first, so malformed ones get Redis's messages. KEEPTTL ("keep the key's TTL") is accepted: with
 * no TTLs it is already true. SET … GET is refused: the backend has no atomic get-and-set.
 *
 * Handlers reply through a `CommandContext` (the connection), synchronously or by `defer`ring a
 * backend promise with an encoder; the connection keeps replies in request order either way.
 * Encoders are module-level functions, so a deferred reply allocates no closure of its own.
 */

import type { KvBackend, KvScanPage, SetCondition } from './backend.ts';
import type { ReplyWriter } from './encoder.ts';
import { type InfoServerView, REDIS_COMPATIBLE_VERSION, renderInfo, selectInfoSections } from './info.ts';
import type { RespLimits } from './limits.ts';

/** What a handler can do on its connection. */
export interface CommandContext {
  readonly backend: KvBackend;
  readonly limits: RespLimits;
  readonly server: InfoServerView;
  /** This connection's id (CLIENT ID, HELLO). */
  readonly connectionId: number;
  /** CLIENT SETNAME's name. */
  clientName: Buffer | null;
  simple(text: string): void;
  error(text: string): void;
  integer(value: number): void;
  bulk(value: Buffer | null): void;
  raw(bytes: Buffer): void;
  /** Replies when `work` settles (a rejection becomes the matching error reply). */
  defer<T>(work: Promise<T>, encode: (writer: ReplyWriter, value: T) => void): void;
  /** Replies +OK and closes the connection once earlier replies are out. */
  quit(): void;
}

/** One command's entry in the table. */
export interface CommandSpec {
  /** Lowercase name. */
  readonly name: string;
  /** Redis's convention: n = exactly n arguments (name included), -n = at least n. */
  readonly arity: number;
  readonly flags: readonly string[];
  readonly firstKey: number;
  readonly lastKey: number;
  readonly keyStep: number;
  readonly categories: readonly string[];
  readonly run: (context: CommandContext, args: Buffer[]) => void;
}

// ---- byte-level helpers ----------------------------------------------------------------------

/** ASCII lowercase of one byte (other bytes unchanged). */
function lowerByte(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

/** `bytes` equals the lowercase ASCII `word` without regard to case. */
export function equalsIgnoreCase(bytes: Buffer, word: string): boolean {
  if (bytes.length !== word.length) return false;
  for (let index = 0; index < bytes.length; index++) {
    if (lowerByte(bytes[index]!) !== word.charCodeAt(index)) return false;
  }
  return true;
}

/** A lowercase string of an argument (for INFO sections and CONFIG patterns). */
function lowerText(bytes: Buffer): string {
  return bytes.toString('latin1').toLowerCase();
}

/** How Redis quotes an argument in an error: as a C string (up to a NUL), at most `max` bytes. */
function quoted(bytes: Buffer, max: number): string {
  const nul = bytes.indexOf(0);
  const end = Math.min(nul === -1 ? bytes.length : nul, max);
  return bytes.toString('latin1', 0, end);
}

/**
 * Redis's `string2ll` followed by a range check: an optional '-', digits, no leading zeros, no
 * spaces or '+'. Null when the bytes are not such an integer or it is not a safe integer.
 */
export function parseInteger(bytes: Buffer): number | null {
  const length = bytes.length;
  if (length === 0 || length > 17) return null;
  let index = 0;
  let negative = false;
  if (bytes[0] === 0x2d) {
    negative = true;
    index = 1;
    if (length === 1) return null;
  }
  if (bytes[index] === 0x30) return length === 1 ? 0 : null;
  let value = 0;
  for (; index < length; index++) {
    const digit = bytes[index]! - 0x30;
    if (digit < 0 || digit > 9) return null;
    value = value * 10 + digit;
  }
  if (!Number.isSafeInteger(value)) return null;
  return negative ? -value : value;
}

function arityError(name: string): string {
  return `ERR wrong number of arguments for '${name}' command`;
}

function unknownSubcommand(sub: Buffer, command: string): string {
  return `ERR unknown subcommand '${quoted(sub, 128)}'. Try ${command} HELP.`;
}

const SYNTAX_ERROR = 'ERR syntax error';
const NOT_AN_INTEGER = 'ERR value is not an integer or out of range';

/** Exactly Redis's reply to an unknown command, trailing space included. */
export function unknownCommandError(args: readonly Buffer[]): string {
  let rest = '';
  for (let index = 1; index < args.length && rest.length < 128; index++) {
    rest += `'${quoted(args[index]!, 128 - rest.length)}' `;
  }
  return `ERR unknown command '${quoted(args[0]!, 128)}', with args beginning with: ${rest}`;
}

/** Refuses an oversized key (replying) and returns false; true when it fits. */
function keyFits(context: CommandContext, key: Buffer): boolean {
  const max = context.limits.maxKeyBytes;
  if (key.length <= max) return true;
  context.error(`ERR key of ${key.length} bytes exceeds the limit of ${max} bytes (maxKeyBytes)`);
  return false;
}

/** args[1..] as keys, or null (after replying) when one is oversized. */
function keysFrom(context: CommandContext, args: Buffer[]): Buffer[] | null {
  const keys = args.slice(1);
  for (const key of keys) if (!keyFits(context, key)) return null;
  return keys;
}

// ---- reply encoders for deferred replies --------------------------------------------------------

function writeBulk(writer: ReplyWriter, value: Buffer | null): void {
  writer.bulk(value);
}

function writeInteger(writer: ReplyWriter, value: number): void {
  writer.integer(value);
}

function writeBulkArray(writer: ReplyWriter, values: ReadonlyArray<Buffer | null>): void {
  writer.bulkArray(values);
}

/** SET's reply: +OK when written, a null bulk when NX/XX did not hold (as Redis). */
function writeSetResult(writer: ReplyWriter, written: boolean): void {
  if (written) writer.simple('OK');
  else writer.bulk(null);
}

function writeText(writer: ReplyWriter, text: string): void {
  writer.bulk(Buffer.from(text, 'utf8'));
}

// ---- handlers -----------------------------------------------------------------------------------

function get(context: CommandContext, args: Buffer[]): void {
  const key = args[1]!;
  if (!keyFits(context, key)) return;
  context.defer(context.backend.get(key), writeBulk);
}

const EXPIRE_OPTIONS = ['ex', 'px', 'exat', 'pxat'] as const;

function set(context: CommandContext, args: Buffer[]): void {
  // Parsed as Redis's parseExtendedStringArgumentsOrReply does, conflicts included.
  let condition: SetCondition = 'always';
  let expireOption: string | null = null;
  let expireValue: Buffer | null = null;
  let keepTtl = false;
  let getOld = false;
  for (let index = 3; index < args.length; index++) {
    const option = args[index]!;
    const next = index + 1 < args.length ? args[index + 1]! : null;
    if (equalsIgnoreCase(option, 'nx') && condition !== 'if-present') {
      condition = 'if-absent';
    } else if (equalsIgnoreCase(option, 'xx') && condition !== 'if-absent') {
      condition = 'if-present';
    } else if (equalsIgnoreCase(option, 'get')) {
      getOld = true;
    } else if (equalsIgnoreCase(option, 'keepttl') && expireOption === null) {
      keepTtl = true;
    } else {
      const expire = EXPIRE_OPTIONS.find((name) => equalsIgnoreCase(option, name));
      if (
        expire === undefined ||
        next === null ||
        keepTtl ||
        (expireOption !== null && expireOption !== expire)
      ) {
        context.error(SYNTAX_ERROR);
        return;
      }
      expireOption = expire;
      expireValue = next;
      index++;
    }
  }
  if (expireValue !== null) {
    const amount = parseInteger(expireValue);
    if (amount === null) {
      context.error(NOT_AN_INTEGER);
      return;
    }
    if (amount <= 0) {
      context.error("ERR invalid expire time in 'set' command");
      return;
    }
    context.error(
      `ERR SET option '${expireOption!.toUpperCase()}' is not supported: ipipe RKV keys do not expire; ` +
        'drop the option (or delete the key yourself)',
    );
    return;
  }
  if (getOld) {
    context.error("ERR SET option 'GET' is not supported by ipipe RKV: send GET, then SET");
    return;
  }
  const key = args[1]!;
  const value = args[2]!;
  if (!keyFits(context, key)) return;
  const maxValue = context.limits.maxValueBytes;
  if (value.length > maxValue) {
    context.error(
      `ERR value of ${value.length} bytes exceeds the limit of ${maxValue} bytes (maxValueBytes)`,
    );
    return;
  }
  context.defer(context.backend.set(key, value, condition), writeSetResult);
}

function del(context: CommandContext, args: Buffer[]): void {
  const keys = keysFrom(context, args);
  if (keys !== null) context.defer(context.backend.del(keys), writeInteger);
}

function exists(context: CommandContext, args: Buffer[]): void {
  const keys = keysFrom(context, args);
  if (keys !== null) context.defer(context.backend.exists(keys), writeInteger);
}

function mget(context: CommandContext, args: Buffer[]): void {
  const keys = keysFrom(context, args);
  if (keys !== null) context.defer(context.backend.mget(keys), writeBulkArray);
}

function ping(context: CommandContext, args: Buffer[]): void {
  if (args.length > 2) context.error(arityError('ping'));
  else if (args.length === 2) context.bulk(args[1]!);
  else context.simple('PONG');
}

function echo(context: CommandContext, args: Buffer[]): void {
  context.bulk(args[1]!);
}

function info(context: CommandContext, args: Buffer[]): void {
  const sections = selectInfoSections(args.slice(1).map(lowerText));
  const backend = context.backend;
  const server = context.server;
  const work = Promise.all([backend.info(), sections.has('keyspace') ? backend.dbsize() : null]).then(
    ([backendInfo, dbsize]) => renderInfo(sections, server, backendInfo, dbsize),
  );
  context.defer(work, writeText);
}

function dbsize(context: CommandContext): void {
  context.defer(context.backend.dbsize(), writeInteger);
}

/** COUNT's default, as Redis's. */
const SCAN_DEFAULT_COUNT = 10;

/**
 * SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: one page of the backend's keys, filtered by
 * MATCH after the page is read (so a page may come back empty with a non-zero cursor, as in
 * Redis). Every key is a string, so TYPE string keeps them and any other type keeps none.
 */
function scan(context: CommandContext, args: Buffer[]): void {
  const cursorText = args[1]!.toString('latin1');
  if (!/^(0|[1-9][0-9]{0,19})$/.test(cursorText) || BigInt(cursorText) >= 1n << 64n) {
    context.error('ERR invalid cursor');
    return;
  }
  let pattern: Buffer | null = null;
  let count = SCAN_DEFAULT_COUNT;
  let keepType = true;
  for (let index = 2; index < args.length; index += 2) {
    const option = args[index]!;
    const value = args[index + 1];
    if (value === undefined) {
      context.error(SYNTAX_ERROR);
      return;
    }
    if (equalsIgnoreCase(option, 'match')) pattern = value;
    else if (equalsIgnoreCase(option, 'count')) {
      const parsed = parseInteger(value);
      if (parsed === null) {
        context.error(NOT_AN_INTEGER);
        return;
      }
      if (parsed < 1) {
        context.error(SYNTAX_ERROR);
        return;
      }
      count = parsed;
    } else if (equalsIgnoreCase(option, 'type')) keepType = equalsIgnoreCase(value, 'string');
    else {
      context.error(SYNTAX_ERROR);
      return;
    }
  }
  const backend = context.backend;
  if (backend.scan === undefined) {
    context.error('ERR SCAN is not supported by this backend');
    return;
  }
  // Latin-1: one char per byte, so the glob (case-sensitive here, as Redis's MATCH) sees the bytes.
  const glob = pattern?.toString('latin1');
  const work = backend.scan(cursorText, count).then(
    (page): KvScanPage => ({
      cursor: page.cursor,
      keys: !keepType
        ? []
        : glob === undefined
          ? page.keys
          : page.keys.filter((key) => globMatch(glob, key.toString('latin1'))),
    }),
  );
  context.defer(work, writeScanPage);
}

function writeScanPage(writer: ReplyWriter, page: KvScanPage): void {
  writer.arrayHeader(2);
  writer.bulkText(page.cursor);
  writer.bulkArray(page.keys);
}

function select(context: CommandContext, args: Buffer[]): void {
  const index = parseInteger(args[1]!);
  if (index === null || index < -2_147_483_648 || index > 2_147_483_647) context.error(NOT_AN_INTEGER);
  else if (index !== 0) context.error('ERR DB index is out of range');
  else context.simple('OK');
}

function command(context: CommandContext, args: Buffer[]): void {
  if (args.length === 1) {
    context.raw(commandTable().all);
    return;
  }
  const sub = args[1]!;
  if (equalsIgnoreCase(sub, 'count')) {
    if (args.length !== 2) context.error(arityError('command|count'));
    else context.integer(COMMANDS.length);
  } else if (equalsIgnoreCase(sub, 'list')) {
    context.raw(commandTable().names);
  } else if (equalsIgnoreCase(sub, 'info')) {
    if (args.length === 2) {
      context.raw(commandTable().all);
      return;
    }
    const entries = commandTable().entries;
    const parts: Buffer[] = [Buffer.from(`*${args.length - 2}\r\n`, 'latin1')];
    for (let index = 2; index < args.length; index++) {
      const spec = findCommand(args[index]!);
      parts.push(spec === undefined ? NULL_ARRAY : entries.get(spec)!);
    }
    context.raw(Buffer.concat(parts));
  } else if (equalsIgnoreCase(sub, 'docs')) {
    // No documentation to give: an empty map (redis-cli then uses its built-in help).
    context.raw(EMPTY_ARRAY);
  } else {
    context.error(unknownSubcommand(sub, 'COMMAND'));
  }
}

/** CONFIG GET answers a few read-only settings that clients and redis-benchmark ask for. */
function configValues(server: InfoServerView): [string, string][] {
  return [
    ['appendonly', 'no'],
    ['bind', server.host],
    ['client-query-buffer-limit', String(server.limits.maxPendingBytes)],
    ['databases', '1'],
    ['maxclients', String(server.limits.maxConnections)],
    ['maxmemory', '0'],
    ['port', String(server.port)],
    ['proto-max-bulk-len', String(server.limits.maxBulkBytes)],
    ['save', ''],
    ['timeout', '0'],
  ];
}

function config(context: CommandContext, args: Buffer[]): void {
  const sub = args[1]!;
  if (equalsIgnoreCase(sub, 'get')) {
    if (args.length < 3) {
      context.error(arityError('config|get'));
      return;
    }
    const patterns = args.slice(2).map(lowerText);
    const pairs = configValues(context.server).filter(([name]) =>
      patterns.some((pattern) => globMatch(pattern, name)),
    );
    const parts: string[] = [`*${pairs.length * 2}\r\n`];
    for (const [name, value] of pairs)
      parts.push(`$${name.length}\r\n${name}\r\n$${value.length}\r\n${value}\r\n`);
    context.raw(Buffer.from(parts.join(''), 'latin1'));
  } else if (equalsIgnoreCase(sub, 'set')) {
    context.error(
      'ERR CONFIG SET is not supported by the ipipe RESP front: set limits when the server starts',
    );
  } else {
    context.error(unknownSubcommand(sub, 'CONFIG'));
  }
}

/** Redis refuses names with bytes outside '!'..'~'. */
function validClientName(name: Buffer): boolean {
  for (const byte of name) if (byte < 0x21 || byte > 0x7e) return false;
  return true;
}

function client(context: CommandContext, args: Buffer[]): void {
  const sub = args[1]!;
  if (equalsIgnoreCase(sub, 'setname')) {
    if (args.length !== 3) context.error(arityError('client|setname'));
    else if (!validClientName(args[2]!)) {
      context.error('ERR Client names cannot contain spaces, newlines or special characters.');
    } else {
      context.clientName = args[2]!.length === 0 ? null : Buffer.from(args[2]!);
      context.simple('OK');
    }
  } else if (equalsIgnoreCase(sub, 'getname')) {
    if (args.length !== 2) context.error(arityError('client|getname'));
    else context.bulk(context.clientName);
  } else if (equalsIgnoreCase(sub, 'id')) {
    if (args.length !== 2) context.error(arityError('client|id'));
    else context.integer(context.connectionId);
  } else if (equalsIgnoreCase(sub, 'setinfo')) {
    // Sent by ioredis and newer clients at connect (Redis 7.2); accepted and not kept.
    if (args.length !== 4) context.error(arityError('client|setinfo'));
    else if (!equalsIgnoreCase(args[2]!, 'lib-name') && !equalsIgnoreCase(args[2]!, 'lib-ver')) {
      context.error(`ERR Unrecognized option '${quoted(args[2]!, 128)}'`);
    } else context.simple('OK');
  } else {
    context.error(unknownSubcommand(sub, 'CLIENT'));
  }
}

/**
 * HELLO: this front speaks RESP2 only. `HELLO` and `HELLO 2` get the RESP2 form of Redis's
 * handshake reply; `HELLO 3` gets `-NOPROTO`, which is how Redis itself says "not that protocol
 * version", so a client configured for RESP3 fails with a clear error instead of misreading
 * replies. ioredis's default handshake (RESP2) sends no HELLO at all (tested in ioredis.test.ts).
 */
function hello(context: CommandContext, args: Buffer[]): void {
  if (args.length >= 2) {
    const version = parseInteger(args[1]!);
    if (version === null) {
      context.error('ERR Protocol version is not an integer or out of range');
      return;
    }
    if (version !== 2) {
      context.error('NOPROTO unsupported protocol version');
      return;
    }
    let name: Buffer | undefined;
    for (let index = 2; index < args.length; index++) {
      const more = args.length - index - 1;
      if (equalsIgnoreCase(args[index]!, 'auth') && more >= 2) {
        index += 2; // no passwords here: the default user takes any, as Redis's nopass user does
      } else if (equalsIgnoreCase(args[index]!, 'setname') && more >= 1) {
        name = args[++index]!;
        if (!validClientName(name)) {
          context.error('ERR Client names cannot contain spaces, newlines or special characters.');
          return;
        }
      } else {
        context.error(`ERR Syntax error in HELLO option '${quoted(args[index]!, 128)}'`);
        return;
      }
    }
    if (name !== undefined) context.clientName = name.length === 0 ? null : Buffer.from(name);
  }
  const id = context.connectionId;
  context.defer(context.backend.info(), (writer, backendInfo) => {
    writer.arrayHeader(14);
    writer.bulkText('server');
    writer.bulkText('redis');
    writer.bulkText('version');
    writer.bulkText(REDIS_COMPATIBLE_VERSION);
    writer.bulkText('proto');
    writer.integer(2);
    writer.bulkText('id');
    writer.integer(id);
    writer.bulkText('mode');
    writer.bulkText('standalone');
    writer.bulkText('role');
    writer.bulkText(backendInfo.role === 'follower' ? 'replica' : 'master');
    writer.bulkText('modules');
    writer.arrayHeader(0);
  });
}

function auth(context: CommandContext, args: Buffer[]): void {
  if (args.length === 2) {
    // Redis's reply when no password is configured; ioredis recognises it and carries on.
    context.error(
      'ERR AUTH <password> called without any password configured for the default user. ' +
        'Are you sure your configuration is correct?',
    );
  } else if (args.length === 3) context.simple('OK');
  else context.error(SYNTAX_ERROR);
}

function quit(context: CommandContext): void {
  context.quit();
}

// ---- the table ----------------------------------------------------------------------------------

function spec(
  name: string,
  arity: number,
  flags: string,
  keys: [first: number, last: number, step: number],
  categories: string,
  run: CommandSpec['run'],
): CommandSpec {
  return {
    name,
    arity,
    flags: flags.split(' ').filter(Boolean),
    firstKey: keys[0],
    lastKey: keys[1],
    keyStep: keys[2],
    categories: categories.split(' ').filter(Boolean),
    run,
  };
}

/** Every command answered; flags, key positions and categories as Redis 7.0 reports them. */
export const COMMANDS: readonly CommandSpec[] = [
  spec('get', 2, 'readonly fast', [1, 1, 1], '@read @string @fast', get),
  spec('set', -3, 'write denyoom', [1, 1, 1], '@write @string @slow', set),
  spec('del', -2, 'write', [1, -1, 1], '@keyspace @write @slow', del),
  spec('exists', -2, 'readonly fast', [1, -1, 1], '@keyspace @read @fast', exists),
  spec('mget', -2, 'readonly fast', [1, -1, 1], '@read @string @fast', mget),
  spec('ping', -1, 'fast', [0, 0, 0], '@fast @connection', ping),
  spec('echo', 2, 'fast', [0, 0, 0], '@fast @connection', echo),
  spec('info', -1, 'loading stale', [0, 0, 0], '@slow @dangerous', info),
  spec('dbsize', 1, 'readonly fast', [0, 0, 0], '@keyspace @read @fast', dbsize),
  spec('scan', -2, 'readonly', [0, 0, 0], '@keyspace @read @slow', scan),
  spec('select', 2, 'loading stale fast', [0, 0, 0], '@fast @connection', select),
  spec('command', -1, 'loading stale', [0, 0, 0], '@slow @connection', command),
  spec('config', -2, 'admin noscript loading stale', [0, 0, 0], '@admin @slow @dangerous', config),
  spec('client', -2, 'noscript loading stale', [0, 0, 0], '@slow @connection', client),
  spec('hello', -1, 'noscript loading stale fast no_auth', [0, 0, 0], '@fast @connection', hello),
  spec('auth', -2, 'noscript loading stale fast no_auth', [0, 0, 0], '@fast @connection', auth),
  spec('quit', -1, 'allow_busy noscript loading stale fast no_auth', [0, 0, 0], '@fast @connection', quit),
];

/** Candidates by name length, for a lookup that allocates nothing (the name is not decoded). */
const BY_LENGTH: CommandSpec[][] = [];
for (const entry of COMMANDS) {
  const bucket = BY_LENGTH[entry.name.length] ?? [];
  bucket.push(entry);
  BY_LENGTH[entry.name.length] = bucket;
}

/** The command named by `name` (any case), or undefined. */
export function findCommand(name: Buffer): CommandSpec | undefined {
  const candidates = BY_LENGTH[name.length];
  if (candidates === undefined) return undefined;
  for (const candidate of candidates) if (equalsIgnoreCase(name, candidate.name)) return candidate;
  return undefined;
}

/**
 * Redis closes, without a reply, a connection whose command is `POST` or `Host:`: that is an HTTP
 * request, typically a web page making a browser talk to a local Redis port.
 */
export function isCrossProtocolAttack(name: Buffer): boolean {
  return equalsIgnoreCase(name, 'post') || equalsIgnoreCase(name, 'host:');
}

/** Checks arity; replies Redis's error and returns false when wrong. */
export function arityHolds(context: CommandContext, entry: CommandSpec, argCount: number): boolean {
  const ok = entry.arity >= 0 ? argCount === entry.arity : argCount >= -entry.arity;
  if (!ok) context.error(arityError(entry.name));
  return ok;
}

const NULL_ARRAY = Buffer.from('*-1\r\n', 'latin1');
const EMPTY_ARRAY = Buffer.from('*0\r\n', 'latin1');

interface CommandTableReplies {
  readonly all: Buffer;
  readonly names: Buffer;
  readonly entries: Map<CommandSpec, Buffer>;
}

let tableReplies: CommandTableReplies | undefined;

/** COMMAND's replies, encoded once: entries in Redis 7's ten-field RESP2 form. */
function commandTable(): CommandTableReplies {
  if (tableReplies !== undefined) return tableReplies;
  const entries = new Map<CommandSpec, Buffer>();
  const simpleArray = (items: readonly string[]): string =>
    `*${items.length}\r\n${items.map((item) => `+${item}\r\n`).join('')}`;
  for (const entry of COMMANDS) {
    const text =
      '*10\r\n' +
      `$${entry.name.length}\r\n${entry.name}\r\n` +
      `:${entry.arity}\r\n` +
      simpleArray(entry.flags) +
      `:${entry.firstKey}\r\n:${entry.lastKey}\r\n:${entry.keyStep}\r\n` +
      simpleArray(entry.categories) +
      '*0\r\n*0\r\n*0\r\n'; // tips, key specifications, subcommands
    entries.set(entry, Buffer.from(text, 'latin1'));
  }
  const all = Buffer.concat([Buffer.from(`*${COMMANDS.length}\r\n`, 'latin1'), ...entries.values()]);
  const names = Buffer.from(
    `*${COMMANDS.length}\r\n${COMMANDS.map((entry) => `$${entry.name.length}\r\n${entry.name}\r\n`).join('')}`,
    'latin1',
  );
  tableReplies = { all, names, entries };
  return tableReplies;
}

/**
 * Redis's glob (`stringmatchlen`): `*`, `?`, `[abc]`, `[a-z]`, `[^…]` and `\` escapes,
 * case-sensitive (CONFIG GET lowercases both sides first; SCAN's MATCH does not).
 */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      starP = p++;
      starT = t;
      continue;
    }
    if (c !== undefined && matchOne(pattern, p, text[t]!)) {
      p = nextPatternIndex(pattern, p);
      t++;
      continue;
    }
    if (starP === -1) return false;
    p = starP + 1;
    t = ++starT;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Whether the pattern element at `p` (not `*`) matches `char`. */
function matchOne(pattern: string, p: number, char: string): boolean {
  const c = pattern[p]!;
  if (c === '?') return true;
  if (c === '\\' && p + 1 < pattern.length) return pattern[p + 1] === char;
  if (c !== '[') return c === char;
  let index = p + 1;
  const negate = pattern[index] === '^';
  if (negate) index++;
  let matched = false;
  while (index < pattern.length && pattern[index] !== ']') {
    if (pattern[index] === '\\' && index + 1 < pattern.length) {
      if (pattern[index + 1] === char) matched = true;
      index += 2;
    } else if (pattern[index + 1] === '-' && index + 2 < pattern.length && pattern[index + 2] !== ']') {
      const [low, high] = [pattern[index]!, pattern[index + 2]!].sort();
      if (char >= low! && char <= high!) matched = true;
      index += 3;
    } else {
      if (pattern[index] === char) matched = true;
      index++;
    }
  }
  return negate ? !matched : matched;
}

/** The index after the pattern element at `p`. */
function nextPatternIndex(pattern: string, p: number): number {
  const c = pattern[p];
  if (c === '\\') return Math.min(p + 2, pattern.length);
  if (c !== '[') return p + 1;
  let index = p + 1;
  if (pattern[index] === '^') index++;
  while (index < pattern.length && pattern[index] !== ']') index += pattern[index] === '\\' ? 2 : 1;
  return Math.min(index + 1, pattern.length);
}
