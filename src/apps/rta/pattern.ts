/**
 * The filter's regular expression (iPipe §5, "The applications": RTA's filter does "pattern
 * matching"). Compiled once at start-up by the configuration, so a bad pattern is refused before
 * any node runs, and again by each filter core that meets it (a cache keyed by the pattern).
 */

import { RtaFilterPatternError } from './errors.ts';
import { MAX_PATTERN_BYTES } from './limits.ts';

/** What the filter does with a tuple whose text matches the pattern. */
export type FilterMode = 'keep-matching' | 'drop-matching';

/**
 * Compiles the filter's pattern. Throws RtaFilterPatternError naming the pattern and the problem:
 * a syntax error, an unknown flag, a pattern over MAX_PATTERN_BYTES, or `g`/`y`, which would make
 * `test` remember where the last match ended and skip matches in the next tuple's text.
 */
export function compileFilterPattern(pattern: string, flags: string): RegExp {
  if (typeof pattern !== 'string')
    throw new RtaFilterPatternError(String(pattern), String(flags), 'it is not a string');
  if (typeof flags !== 'string')
    throw new RtaFilterPatternError(pattern, String(flags), 'flags must be a string');
  const bytes = new TextEncoder().encode(pattern).length;
  if (bytes > MAX_PATTERN_BYTES) {
    throw new RtaFilterPatternError(
      `${pattern.slice(0, 40)}…`,
      flags,
      `it is ${bytes} UTF-8 bytes, over the limit of ${MAX_PATTERN_BYTES}`,
    );
  }
  for (const flag of ['g', 'y']) {
    if (flags.includes(flag)) {
      throw new RtaFilterPatternError(
        pattern,
        flags,
        `flag "${flag}" makes RegExp.test stateful (it keeps lastIndex from one tuple to the next); leave it out`,
      );
    }
  }
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    throw new RtaFilterPatternError(pattern, flags, problem);
  }
}
