/**
 * The most recent entries of a stream that never ends — a live node's scheduler decisions and
 * migrations — and how many there were in all. A node serves for days; a list that kept every
 * decision would grow with each settle period of a fluctuating load (and /stats would copy it all).
 */
export class RecentLog<T> {
  readonly limit: number;
  #items: T[] = [];
  #total = 0;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`a RecentLog keeps at least one entry, got ${limit}`);
    this.limit = limit;
  }

  push(item: T): void {
    this.#items.push(item);
    this.#total++;
    // Trimmed in halves, so a push costs O(1) amortised rather than a shift per entry.
    if (this.#items.length >= 2 * this.limit)
      this.#items = this.#items.slice(this.#items.length - this.limit);
  }

  /** Entries ever pushed, held or not. */
  get total(): number {
    return this.#total;
  }

  /** The last `limit` entries (fewer before there were that many), oldest first. */
  recent(): T[] {
    const items = this.#items;
    return items.length > this.limit ? items.slice(items.length - this.limit) : items.slice();
  }

  /** Entries pushed after the first `seen` ever pushed that are still held, oldest first. */
  since(seen: number): T[] {
    const items = this.#items;
    const firstHeld = this.#total - items.length;
    return items.slice(Math.max(seen, firstHeld) - firstHeld);
  }
}
