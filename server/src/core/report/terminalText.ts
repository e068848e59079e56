/**
 * Text for a terminal, where server-provided names, messages and standard error must not act:
 * ESC starts escape sequences (colours, cursor moves, title changes, hyperlinks), CR and BS
 * overwrite what was printed, BEL rings, and bidirectional controls (U+202E) reorder what the
 * reader sees. Each such character is shown visibly instead, as a `\u{…}` escape of at least four
 * hex digits (ESC → `\u{001b}`, CR → `\u{000d}`, U+202E → `\u{202e}`). Line feeds and tabs stay.
 */

// C0 controls but \t and \n, DEL, C1 controls, the Unicode bidirectional formatting characters,
// the line and paragraph separators, and the invisible ones that hide or join words (soft hyphen,
// zero-width space and joiners, word joiner, byte-order mark, interlinear annotation controls).
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this file.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** `text` with every control and bidirectional formatting character made visible. Pure. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (character) => `\\u{${character.charCodeAt(0).toString(16).padStart(4, '0')}}`);
}
