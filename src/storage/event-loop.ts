/**
 * Long work on the main thread in slices. Awaiting a promise that is already resolved (a better-sqlite3
 * statement behind the asynchronous store interface, a loop over rows) runs the rest as a microtask: the
 * event loop never gets a turn, so no other request is read, answered or even accepted until the work ends.
 * Work that may run long asks `pause()` between its steps; once the thread has worked for a slice without a
 * turn of the event loop, it gets a promise that resolves after one (timers, network I/O and the other
 * requests' callbacks run first).
 *
 * A slice starts at the first step that asks and ends when the event loop next reaches its check phase
 * (`setImmediate`), whoever yielded: so short requests never wait, and several long ones share the time.
 */

/** How long the thread works before it lets the event loop run: short against a request's answer time. */
const SLICE_MS = 10;

let sliceStart = 0;
let inSlice = false;

function endSlice(): void {
  inSlice = false;
}

/**
 * Undefined while the current slice is short (go on at once); otherwise a promise that resolves once the
 * event loop has had a turn. Cheap enough to ask before every statement.
 */
export function pause(): Promise<void> | undefined {
  const now = performance.now();
  if (!inSlice) {
    inSlice = true;
    sliceStart = now;
    setImmediate(endSlice);
    return undefined;
  }
  if (now - sliceStart < SLICE_MS) return undefined;
  return new Promise<void>((resolve) => setImmediate(resolve));
}
