/**
 * The size bound of an HTTP server's answers, counted on the inflated bytes as they stream in.
 *
 * `fetch` inflates a `gzip` or `br` body on the fly, so a 2 MiB body can become 2 GiB of text; the
 * SDK reads a JSON answer whole (`response.json()`) and an event stream event by event, with no
 * bound on either. This wrapper counts the bytes the SDK is given: a JSON (or any non-stream) body
 * may hold at most `limit` bytes, and so may each event of an event stream (a stream lives long,
 * an event is one message). Past the bound the body errors at once, the connection is cancelled,
 * and `exceeded` holds the message the session reports for that server only. The bound is the one
 * the stdio transport sets on a message line (processTransport.ts), 10 MiB.
 */
import { MAX_LINE_BYTES } from './processTransport';

export { MAX_LINE_BYTES as MAX_ANSWER_BYTES };

/** The error an over-long body fails with; the SDK passes it on or closes the stream. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`answer larger than ${formatLimit(limit)}`);
    this.name = 'AnswerTooLargeError';
  }
}

/** One server's answer bound: wraps each response of its `fetch` and remembers the first overflow. */
export class AnswerLimit {
  /** The message of the first answer that passed the bound, e.g. "answer larger than 10 MiB". */
  exceeded: string | undefined;

  /**
   * @param limit the largest answer (or event) in bytes after inflation.
   * @param onExceeded called once, at the first overflow (the session closes its transport, so a
   *   request waiting on an event stream ends now rather than at its timeout).
   */
  constructor(
    readonly limit: number,
    private readonly onExceeded: () => void = () => undefined,
  ) {}

  /** The same response, whose body errors with {@link AnswerTooLargeError} past the bound. */
  wrap(response: Response): Response {
    if (!response.body) return response;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const counter = eventStream ? new EventSizeCounter() : undefined;
    let total = 0;
    const limit = this.limit;
    const counting = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        const size = counter ? counter.longestEventAfter(chunk) : (total += chunk.byteLength);
        if (size > limit) {
          const error = new AnswerTooLargeError(limit);
          if (this.exceeded === undefined) {
            this.exceeded = error.message;
            this.onExceeded();
          }
          controller.error(error);
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(counting), { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}

/**
 * The bytes of the event an event stream is in, across chunks. An event ends at an empty line
 * (`\n\n`, `\r\n\r\n`); the count is reset there. Linear in the bytes: each chunk is searched for
 * line feeds once, from where the previous search stopped.
 */
class EventSizeCounter {
  /** Bytes of the current (unfinished) event so far. */
  private eventBytes = 0;
  /** Bytes of the current line so far, not counting a carriage return. */
  private lineBytes = 0;

  /** Feeds one chunk; returns the largest event size seen in it (finished or not). */
  longestEventAfter(chunk: Uint8Array): number {
    let longest = 0;
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const line = lineLength(chunk, start, newline);
      this.eventBytes += newline + 1 - start;
      longest = Math.max(longest, this.eventBytes);
      if (this.lineBytes + line === 0) this.eventBytes = 0;
      this.lineBytes = 0;
      start = newline + 1;
    }
    const rest = chunk.byteLength - start;
    this.eventBytes += rest;
    this.lineBytes += lineLength(chunk, start, chunk.byteLength);
    return Math.max(longest, this.eventBytes);
  }
}

/** The length of chunk[start, end) without a carriage return at its end. */
function lineLength(chunk: Uint8Array, start: number, end: number): number {
  return end > start && chunk[end - 1] === 0x0d ? end - start - 1 : end - start;
}

function formatLimit(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
