/**
 * Markdown for hovers, where tool names, descriptions and schemas come from servers and are
 * untrusted: they only ever appear inside code spans or fenced code blocks whose fences are longer
 * than any backtick run in the text, so they cannot close the block, inject links or commands.
 */

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const match of text.matchAll(/`+/g)) longest = Math.max(longest, match[0].length);
  return longest;
}

/** Inline code that shows `text` literally. */
export function inlineCode(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  const fence = '`'.repeat(longestBacktickRun(flat) + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced code block that shows `text` literally. */
export function codeBlock(text: string, language = ''): string {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}
