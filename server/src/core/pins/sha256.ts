/**
 * SHA-256 for the tool pin. This is the only core file that imports a Node module: `node:crypto`'s
 * hash is a pure computation (no I/O, no state), and the lint rule that keeps the core pure allows
 * it here alone. Everything else in the core calls {@link sha256Hex}.
 */
import { createHash, hash } from 'node:crypto';

/**
 * The one-shot `crypto.hash` (Node 20.12 and later) where the runtime has it: for a tool pin's few
 * hundred bytes it costs a fraction of creating a Hash object. Older runtimes use `createHash`;
 * both give the same digest of the string's UTF-8 bytes.
 */
const oneShot: ((algorithm: string, data: string, encoding: 'hex') => string) | undefined = typeof hash === 'function' ? hash : undefined;

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : createHash('sha256').update(text, 'utf8').digest('hex');
}
