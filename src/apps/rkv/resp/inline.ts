/**
 * Inline commands: the one-line form a person types into telnet (`SET k "two words"`), split the
 * way Redis splits them (its `sdssplitargs`), so a typed command means the same here as there.
 *
 * Rules, as in Redis: arguments are separated by blanks; an argument may be "double quoted" (with
 * \n \r \t \b \a \\ \" and \xHH escapes) or 'single quoted' (only \' escapes); a closing quote must
 * be followed by a blank or the end of the line; a NUL byte ends the line (Redis reads it as a C
 * string). An unterminated quote makes the whole line invalid (`null`): the caller replies
 * `Protocol error: unbalanced quotes in request` and closes, as Redis does.
 *
 * Not a hot path (clients send arrays of bulk strings), but plain arguments are still returned as
 * views into the line, without a copy.
 */

const NUL = 0x00;
const TAB = 0x09;
const LF = 0x0a;
const VT = 0x0b;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
const BACKSLASH = 0x5c;

/** C's isspace() in the C locale: what Redis skips between arguments. */
function isBlank(byte: number): boolean {
  return byte === SPACE || (byte >= TAB && byte <= CR) || byte === VT || byte === FF;
}

/** Ends an unquoted argument (Redis's switch: space, \n, \r, \t, NUL; not \v or \f). */
function endsPlainArgument(byte: number): boolean {
  return byte === SPACE || byte === LF || byte === CR || byte === TAB || byte === NUL;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/**
 * Splits one inline line (without its `\n` and the `\r` before it) into arguments; `null` when
 * quotes are unbalanced. An empty or all-blank line gives no arguments (Redis skips it).
 */
export function splitInlineArguments(line: Buffer): Buffer[] | null {
  const nulAt = line.indexOf(NUL);
  const end = nulAt === -1 ? line.length : nulAt;
  // Bytes past the end read as NUL, as in the C original, so look-ahead needs no bounds checks.
  const at = (index: number): number => (index < end ? line[index]! : NUL);
  const args: Buffer[] = [];
  let p = 0;
  for (;;) {
    while (p < end && isBlank(line[p]!)) p++;
    if (p >= end) return args;

    // Fast path: a plain argument with no quote in it is a view into the line.
    let scan = p;
    while (scan < end && !endsPlainArgument(line[scan]!)) {
      const byte = line[scan]!;
      if (byte === DOUBLE_QUOTE || byte === SINGLE_QUOTE) break;
      scan++;
    }
    if (scan >= end || endsPlainArgument(line[scan]!)) {
      args.push(line.subarray(p, scan));
      p = scan;
      continue;
    }

    // General path: a faithful port of sdssplitargs's inner loop for one argument.
    const bytes: number[] = [];
    let inDoubleQuotes = false;
    let inSingleQuotes = false;
    let done = false;
    while (!done) {
      const byte = at(p);
      if (inDoubleQuotes) {
        if (
          byte === BACKSLASH &&
          at(p + 1) === 0x78 &&
          hexValue(at(p + 2)) >= 0 &&
          hexValue(at(p + 3)) >= 0
        ) {
          bytes.push(hexValue(at(p + 2)) * 16 + hexValue(at(p + 3)));
          p += 3;
        } else if (byte === BACKSLASH && at(p + 1) !== NUL) {
          p++;
          const escaped = at(p);
          bytes.push(
            escaped === 0x6e // n
              ? LF
              : escaped === 0x72 // r
                ? CR
                : escaped === 0x74 // t
                  ? TAB
                  : escaped === 0x62 // b
                    ? 0x08
                    : escaped === 0x61 // a
                      ? 0x07
                      : escaped,
          );
        } else if (byte === DOUBLE_QUOTE) {
          // The closing quote must be followed by a blank or nothing at all.
          if (at(p + 1) !== NUL && !isBlank(at(p + 1))) return null;
          done = true;
        } else if (byte === NUL) {
          return null;
        } else {
          bytes.push(byte);
        }
      } else if (inSingleQuotes) {
        if (byte === BACKSLASH && at(p + 1) === SINGLE_QUOTE) {
          p++;
          bytes.push(SINGLE_QUOTE);
        } else if (byte === SINGLE_QUOTE) {
          if (at(p + 1) !== NUL && !isBlank(at(p + 1))) return null;
          done = true;
        } else if (byte === NUL) {
          return null;
        } else {
          bytes.push(byte);
        }
      } else if (endsPlainArgument(byte)) {
        done = true;
      } else if (byte === DOUBLE_QUOTE) {
        inDoubleQuotes = true;
      } else if (byte === SINGLE_QUOTE) {
        inSingleQuotes = true;
      } else {
        bytes.push(byte);
      }
      if (at(p) !== NUL) p++;
    }
    args.push(Buffer.from(bytes));
  }
}
