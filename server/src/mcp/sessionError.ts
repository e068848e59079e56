/**
 * The error a session reports, apart from the session itself (mcp/session.ts), so that code that
 * only handles failures does not load the MCP SDK with it: the inventory loads the SDK when it
 * first opens a session (mcp/inventory.ts).
 */
import type { UnavailableReason } from '../core/verify/verify';

/** A failure with the reason a user sees. The message never contains a credential. */
export class SessionError extends Error {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
  ) {
    super(message);
    this.name = 'SessionError';
  }
}
