/**
 * A three-state futex mutex in one Int32Array word of a SharedArrayBuffer (Drepper, "Futexes are
 * tricky", mutex #3), guarding a region's allocator when a non-exclusive actor runs on several
 * worker threads at once (iPipe §3: actors without the exec lock may run on several cores; they
 * bring their own concurrency control for their data, but the allocator metadata is ours).
 *
 *   0 = unlocked, 1 = locked with no waiters, 2 = locked and someone may sleep in Atomics.wait
 *
 * The uncontended path is one compareExchange to lock and one sub to unlock (a few ns, measured
 * in bench/dmo.bench.ts); only a contended unlock pays for Atomics.notify. A short spin first
 * avoids putting a thread to sleep for a critical section that lasts tens of nanoseconds — waking
 * a sleeping thread on the other core costs ~25–30 µs on the 2-core machines we run on.
 */

const SPINS_BEFORE_SLEEP = 64;

/** Acquires the mutex in `words[index]`, spinning briefly, then sleeping in Atomics.wait. */
export function lockWord(words: Int32Array, index: number): void {
  let state = Atomics.compareExchange(words, index, 0, 1);
  if (state === 0) return;
  for (let spin = 0; spin < SPINS_BEFORE_SLEEP; spin++) {
    if (Atomics.load(words, index) === 0) {
      state = Atomics.compareExchange(words, index, 0, 1);
      if (state === 0) return;
    }
  }
  // Contended: announce a waiter (state 2) and sleep until the holder's unlock notifies us.
  if (state !== 2) state = Atomics.exchange(words, index, 2);
  while (state !== 0) {
    Atomics.wait(words, index, 2);
    state = Atomics.exchange(words, index, 2);
  }
}

/** Releases the mutex in `words[index]`, waking one sleeper if any announced itself. */
export function unlockWord(words: Int32Array, index: number): void {
  if (Atomics.sub(words, index, 1) !== 1) {
    // It was 2: someone may be asleep. Release fully, then wake one.
    Atomics.store(words, index, 0);
    Atomics.notify(words, index, 1);
  }
}
