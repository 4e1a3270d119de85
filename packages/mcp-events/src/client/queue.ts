/**
 * An unbounded async queue behind one subscription's iterator: producers push, the app pulls.
 * It ends normally (cancel) or with an error (the server ended the subscription) after the items
 * already queued have been taken.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = [];
  #waiting: ((result: IteratorResult<T>) => void) | undefined;
  #waitingReject: ((error: unknown) => void) | undefined;
  #ended = false;
  #error: unknown;

  get ended(): boolean {
    return this.#ended;
  }

  push(item: T): void {
    if (this.#ended) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      this.#waitingReject = undefined;
      waiting({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    const waiting = this.#waiting;
    const reject = this.#waitingReject;
    this.#waiting = undefined;
    this.#waitingReject = undefined;
    if (error !== undefined && reject) reject(error);
    else waiting?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
    if (this.#ended) {
      if (this.#error !== undefined) {
        const error = this.#error;
        this.#error = undefined;
        return Promise.reject(error);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      this.#waitingReject = reject;
    });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
