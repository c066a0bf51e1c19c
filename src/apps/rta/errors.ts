/**
 * Typed errors of the real-time analytics application (iPipe §5, "The applications": RTA —
 * filter → counter → ranker → aggregating ranker). Each is an `IpipeError` with a stable code
 * `IPIPE_ERR_RTA_<WHAT>`; a message says what was wrong and what to do, so the CLI can print it.
 *
 * The codes are registered in src/errors.ts's ERROR_CODES and documented in docs/errors.md
 * (test/errors/registry.test.ts checks the two agree).
 */

import { type ErrorCode, IpipeError } from '../../errors.ts';

/** One of RTA's codes: the registry's codes that start with IPIPE_ERR_RTA_. */
export type RtaErrorCode = Extract<ErrorCode, `IPIPE_ERR_RTA_${string}`>;

/** Every code this application throws (each one is in src/errors.ts's ERROR_CODES). */
export const RTA_ERROR_CODES = [
  'IPIPE_ERR_RTA_BAD_PATTERN',
  'IPIPE_ERR_RTA_BAD_CONFIG',
  'IPIPE_ERR_RTA_NOT_CONFIGURED',
  'IPIPE_ERR_RTA_TOPOLOGY',
  'IPIPE_ERR_RTA_NO_VALID_TUPLES',
  'IPIPE_ERR_RTA_INPUT',
] as const satisfies readonly RtaErrorCode[];

/** Base class of RTA's errors: `instanceof RtaError` catches every one of them. */
export class RtaError extends IpipeError {
  readonly rtaCode: RtaErrorCode;
  constructor(code: RtaErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.rtaCode = code;
  }
}

/**
 * The filter's regular expression does not compile, or uses a flag that would make matching
 * stateful (`g`, `y`: `RegExp.test` then remembers `lastIndex` between tuples). Raised when the
 * configuration is read, before any node starts, and again by the filter actor if it is sent one.
 */
export class RtaFilterPatternError extends RtaError {
  readonly pattern: string;
  readonly flags: string;
  readonly problem: string;
  constructor(pattern: string, flags: string, problem: string) {
    super(
      'IPIPE_ERR_RTA_BAD_PATTERN',
      `filter pattern /${pattern}/${flags} is not usable: ${problem}. ` +
        'Fix filter.pattern (a JavaScript regular expression, without the slashes) or filter.flags.',
    );
    this.pattern = pattern;
    this.flags = flags;
    this.problem = problem;
  }
}

/** An RTA configuration value out of range (window not a multiple of the slide, top-n too large, ...). */
export class RtaConfigError extends RtaError {
  /** Where in the configuration, e.g. `window.slideMs`. */
  readonly path: string;
  constructor(path: string, message: string) {
    super('IPIPE_ERR_RTA_BAD_CONFIG', `${path}: ${message}`);
    this.path = path;
  }
}

/** A stream message reached an actor that has not been sent its `configure` message yet. */
export class RtaNotConfiguredError extends RtaError {
  constructor(actorName: string, messageType: string) {
    super(
      'IPIPE_ERR_RTA_NOT_CONFIGURED',
      `actor "${actorName}" got "${messageType}" before "configure": send every RTA actor its configure ` +
        'message (rtaWorkload().setup) before streaming tuples',
    );
  }
}

/** The topology names an instance the actor table does not know. */
export class RtaTopologyError extends RtaError {
  constructor(actorName: string, missing: string, role: string) {
    super(
      'IPIPE_ERR_RTA_TOPOLOGY',
      `actor "${actorName}": no ${role} instance named "${missing}" is registered; register every instance ` +
        'the configuration names (rtaWorkload().actors) before configuring',
    );
  }
}

/** One malformed input line, as the reader reports it. */
export interface MalformedLine {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly reason: string;
}

/** An input file held no usable tuple at all. */
export class RtaNoValidTuplesError extends RtaError {
  readonly source: string;
  readonly lines: number;
  readonly malformed: readonly MalformedLine[];
  constructor(source: string, lines: number, malformed: readonly MalformedLine[]) {
    const shown = malformed
      .slice(0, 5)
      .map((m) => `line ${m.line}: ${m.reason}`)
      .join('; ');
    const more = malformed.length > 5 ? `; and ${malformed.length - 5} more` : '';
    super(
      'IPIPE_ERR_RTA_NO_VALID_TUPLES',
      `${source}: no valid tuple in ${lines} line(s)${shown ? ` (${shown}${more})` : ''}. ` +
        'Expected newline-delimited JSON objects with "timestampMs" and "hashtag" (or "hashtags"), or a CSV ' +
        'file whose header names timestampMs and hashtag columns.',
    );
    this.source = source;
    this.lines = lines;
    this.malformed = malformed;
  }
}

/** An input file that cannot be read at all (missing, unknown format). */
export class RtaInputError extends RtaError {
  readonly source: string;
  constructor(source: string, message: string, options?: ErrorOptions) {
    super('IPIPE_ERR_RTA_INPUT', `${source}: ${message}`, options);
    this.source = source;
  }
}
