/**
 * The language server's timers in virtual time, for the in-process harness
 * (test/support/inProcessServer.ts): no test waits for the wall clock.
 *
 * The server arms every timer through its runtime (`ServerRuntime.setTimeout`), so the harness
 * hands it this clock instead of Node's. A timer due within {@link AUTO_ADVANCE_MS} of the virtual
 * now (the debounces: diagnostics, status, code-lens refresh) fires as soon as the process has
 * nothing else to do (the next `setImmediate` turn), virtual time jumping to when it was due, so a
 * debounced publication arrives as soon as it is computed, and timers fire in the order of their
 * due times. Timers further out (the 2 s history poll, the 15 s stale-listing check) fire only when
 * a test lets that much time pass with {@link VirtualClock.advance}: a test says exactly how much
 * time passes, and nothing repeats on its own.
 */
import type { Timer } from '../../server/src/runtime';

/** Timers due at most this far ahead fire on their own (the longest debounce is the 300 ms default of validate.debounceMs). */
export const AUTO_ADVANCE_MS = 1000;

interface Armed {
  readonly due: number;
  readonly order: number;
  readonly callback: () => void;
}

export class VirtualClock {
  private virtualNow: number;
  private readonly armed = new Set<Armed>();
  private armedCount = 0;
  private firedCount = 0;
  private pump: NodeJS.Immediate | undefined;

  constructor(start: number = Date.now()) {
    this.virtualNow = start;
  }

  /** The virtual time, in milliseconds since the epoch (starts at the wall clock's time of creation). */
  readonly now = (): number => this.virtualNow;

  /** `ServerRuntime.setTimeout` on virtual time. */
  readonly setTimeout = (callback: () => void, milliseconds: number): Timer => {
    const timer: Armed = { due: this.virtualNow + Math.max(0, milliseconds), order: this.armedCount++, callback };
    this.armed.add(timer);
    this.schedulePump();
    return { dispose: () => void this.armed.delete(timer) };
  };

  /** How many timers have fired so far. */
  fired(): number {
    return this.firedCount;
  }

  /** How many timers are armed (not fired, not disposed). */
  pending(): number {
    return this.armed.size;
  }

  /**
   * Lets `milliseconds` of virtual time pass: every timer due by then fires, in due order (those
   * its callbacks arm too, when due in the span), with one `setImmediate` turn after each so that
   * the work it starts runs before the next one fires.
   */
  async advance(milliseconds: number): Promise<void> {
    const until = this.virtualNow + milliseconds;
    for (let next = this.earliest(); next && next.due <= until; next = this.earliest()) {
      this.fire(next);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.virtualNow = Math.max(this.virtualNow, until);
  }

  /** Disarms every timer (the server is stopped). */
  dispose(): void {
    this.armed.clear();
    if (this.pump) clearImmediate(this.pump);
    this.pump = undefined;
  }

  private earliest(): Armed | undefined {
    let found: Armed | undefined;
    for (const timer of this.armed) if (!found || timer.due < found.due || (timer.due === found.due && timer.order < found.order)) found = timer;
    return found;
  }

  private fire(timer: Armed): void {
    this.armed.delete(timer);
    this.firedCount++;
    this.virtualNow = Math.max(this.virtualNow, timer.due);
    timer.callback();
  }

  /** Fires the earliest timer on the next turn when it is due soon enough, and again while one is. */
  private schedulePump(): void {
    if (this.pump) return;
    this.pump = setImmediate(() => {
      this.pump = undefined;
      const next = this.earliest();
      if (!next || next.due - this.virtualNow > AUTO_ADVANCE_MS) return;
      this.fire(next);
      this.schedulePump();
    });
  }
}
