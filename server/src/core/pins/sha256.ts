/**
 * SHA-256 for the tool pin. This is the only core file that imports a Node module: `node:crypto`'s
 * hash is a pure computation (no I/O, no state), and the lint rule that keeps the core pure allows
 * it here alone. Everything else in the core calls {@link sha256Hex}.
 */
import { createHash } from 'node:crypto';

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
