/**
 * The echo actor, as `ipipe run examples/echo.ts` serves it: answers each request with its payload.
 * Its definition lives in src/apps/echo/echo-actor.ts (the showcase runs it from an installed
 * package too, where examples/ is not shipped); this file is the path users and the tests name.
 * Writing your own actor: see examples/counter.ts or the README's "Library API".
 */

export { echo } from '../src/apps/echo/echo-actor.ts';
