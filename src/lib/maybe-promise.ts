/** A value now, or a promise of it: a cache hit is answered without a promise (docs/performance.md). */
export type MaybePromise<T> = T | Promise<T>;

/** `f` applied to a value now, or once the promise settles. */
export function mapMaybe<T, U>(value: MaybePromise<T>, f: (value: T) => U): MaybePromise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}
