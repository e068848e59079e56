/**
 * Cues of tool poisoning in the text a model reads: a tool's description and the strings of its
 * input schema (property descriptions, titles, enum values, defaults). A rug pull rewrites that
 * text to steer the model; these cues are what such rewrites have in common.
 *
 * Contract: `addedPoisoningCues(before, after)` returns the cues present in `after` that `before`
 * does not already contain (a cue the user pinned knowingly is not news; with no `before`, only
 * the cues that are suspicious on their own), each with the kind, a
 * short human label and the quoted evidence (at most 120 characters, control and invisible
 * characters shown as `U+XXXX`). It is pure, linear in the text size (every pattern is anchored on
 * literal words or bounded repetitions; none can backtrack catastrophically), and never throws.
 */

export type PoisoningCueKind = 'instruction' | 'url' | 'secret-path' | 'hidden-unicode' | 'html-comment' | 'important-block' | 'base64';

export interface PoisoningCue {
  readonly kind: PoisoningCueKind;
  /** What the cue is, for a reader: "an instruction aimed at the model". */
  readonly label: string;
  /** The text that shows it, quoted as found (invisible characters made visible). */
  readonly evidence: string;
}

const LABELS: Record<PoisoningCueKind, string> = {
  instruction: 'an instruction aimed at the model',
  url: 'a new URL or domain',
  'secret-path': 'a path to secrets',
  'hidden-unicode': 'hidden Unicode characters',
  'html-comment': 'an HTML comment',
  'important-block': 'an IMPORTANT-style block of instructions',
  base64: 'a long base64 string',
};

/** Phrases that address the model rather than describe the tool (case-insensitive). */
const INSTRUCTIONS: readonly RegExp[] = [
  /\bignore (?:all |any |the )?(?:previous|prior|above|earlier|other) (?:instructions?|rules|messages|tools?)\b/i,
  /\bdisregard (?:all |any |the )?(?:previous|prior|above|earlier) (?:instructions?|rules)\b/i,
  /\bbefore (?:answering|responding|replying|using this tool|calling|you (?:answer|respond|reply))\b/i,
  /\b(?:do not|don't|never) (?:tell|inform|mention|reveal|show|let) (?:this to |it to |anything to )?the user\b/i,
  /\bwithout (?:telling|informing|asking|notifying) the user\b/i,
  /\b(?:the user|they) (?:must not|should not|shouldn't) (?:know|see|notice)\b/i,
  /\byou (?:must|should) (?:always |first |also )?(?:read|send|include|call|pass|upload|forward|copy)\b/i,
  /\b(?:also|first) (?:read|send|include|upload|forward|copy) (?:the |all |any |your )?(?:contents?|file|files|keys?|secrets?|credentials?|tokens?|passwords?)\b/i,
  /\bsystem prompt\b/i,
];

const SECRET_PATHS = /(?:~|\$HOME|%USERPROFILE%)?\/?(?:\.ssh\/[\w.-]*|id_rsa|id_ed25519|id_ecdsa|\.aws\/credentials|\.netrc|\.npmrc|\.pgpass|\.docker\/config\.json|\.kube\/config|\/etc\/(?:passwd|shadow)|\.env\b|\.git-credentials|keychain|login\.keychain(?:-db)?|wallet\.dat)/gi;
const URLS = /\b(?:https?|ftp|wss?):\/\/[^\s"'<>()[\]{}]{1,200}/gi;
// A bare domain: labels of letters, digits and hyphens, ending in a letters-only TLD of 2–24.
const DOMAINS = /\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,8}(?:com|net|org|io|dev|app|ai|co|xyz|info|biz|ru|cn|tk|top|site|online|example|me|sh|cc|ly|gg)\b/gi;
const HIDDEN = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu;
const HTML_COMMENT = /<!--[\s\S]{0,2000}?-->/g;
const IMPORTANT = /<\s*(?:important|system|instructions?|secret|hidden|admin)\s*>/gi;
const BASE64 = /[A-Za-z0-9+/]{40,}={0,2}/g;

/** Makes control and invisible characters visible and bounds the length. */
function quote(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must be made visible.
  const visible = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu, (char) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
  return visible.length > 120 ? `${visible.slice(0, 117)}…` : visible;
}

/** A sentence ends at a newline, or at `.`, `!` or `?` followed by a space or the end of the text. */
function endsSentence(text: string, index: number): boolean {
  const char = text[index]!;
  if (char === '\n') return true;
  return /[.!?]/.test(char) && (index + 1 >= text.length || /\s/.test(text[index + 1]!));
}

/** The sentence around a match, so the quoted evidence reads as the model would read it. */
function sentenceAround(text: string, index: number, length: number): string {
  let start = index;
  while (start > 0 && index - start < 80 && !endsSentence(text, start - 1)) start--;
  let end = index + length;
  while (end < text.length && end - index < 160 && !endsSentence(text, end)) end++;
  if (end < text.length && text[end] !== '\n') end++;
  return text.slice(start, end).trim();
}

/** Every cue in one text, with its evidence. */
export function poisoningCues(text: string): PoisoningCue[] {
  const cues: PoisoningCue[] = [];
  const add = (kind: PoisoningCueKind, evidence: string): void => {
    const quoted = quote(evidence);
    if (!cues.some((cue) => cue.kind === kind && cue.evidence === quoted)) cues.push({ kind, label: LABELS[kind], evidence: quoted });
  };
  for (const pattern of INSTRUCTIONS) {
    const match = pattern.exec(text);
    if (match) add('instruction', sentenceAround(text, match.index, match[0].length));
  }
  for (const match of text.matchAll(SECRET_PATHS)) add('secret-path', match[0]);
  const urls = [...text.matchAll(URLS)].map((match) => match[0]);
  for (const url of urls) add('url', url);
  for (const match of text.matchAll(DOMAINS)) {
    // A domain that is part of a URL already found is that URL's cue, not another.
    if (!urls.some((url) => url.includes(match[0]))) add('url', match[0]);
  }
  const hidden = [...text.matchAll(HIDDEN)];
  if (hidden.length > 0) add('hidden-unicode', [...new Set(hidden.map((match) => match[0]))].join(''));
  for (const match of text.matchAll(HTML_COMMENT)) add('html-comment', match[0]);
  for (const match of text.matchAll(IMPORTANT)) add('important-block', match[0]);
  // URLs and paths are not payloads: base64 is looked for in the text without them, and must mix
  // both cases and digits (a hex digest or a word run has not).
  let withoutUrls = text;
  for (const url of urls) withoutUrls = withoutUrls.split(url).join(' ');
  for (const match of withoutUrls.matchAll(BASE64)) {
    const candidate = match[0];
    if (/[a-z]/.test(candidate) && /[A-Z]/.test(candidate) && /[0-9]/.test(candidate) && (candidate.match(/\//g) ?? []).length < 3) add('base64', candidate);
  }
  return cues;
}

/** Schema keywords whose values are identifiers of the schema language, not text for the model. */
const SCHEMA_IDENTIFIERS = new Set(['$schema', '$id', '$ref', '$anchor', '$dynamicRef', '$dynamicAnchor']);

/** The strings of a value that a model reads: every string, recursively, keys included. */
export function modelReadableStrings(value: unknown, into: string[] = [], depth = 0): string[] {
  if (depth > 64) return into;
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) modelReadableStrings(item, into, depth + 1);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      if (!SCHEMA_IDENTIFIERS.has(key)) modelReadableStrings(item, into, depth + 1);
    }
  }
  return into;
}

/**
 * Cues that are suspicious on their own. Without the pinned content nothing can be shown to be
 * new, so only these are reported then: a URL or a long token is too often part of a tool's
 * honest description to be called poisoning without a before to compare with.
 */
const STRONG: ReadonlySet<PoisoningCueKind> = new Set(['instruction', 'secret-path', 'hidden-unicode', 'html-comment', 'important-block']);

/**
 * The cues in `after` that `before` does not contain. `before` undefined means the pinned content
 * is unknown: then every cue of `after` is reported, since none can be shown to be old.
 */
export function addedPoisoningCues(before: readonly string[] | undefined, after: readonly string[]): PoisoningCue[] {
  const found = poisoningCues(after.join('\n'));
  if (!before) return found.filter((cue) => STRONG.has(cue.kind));
  const old = new Set(poisoningCues(before.join('\n')).map((cue) => `${cue.kind}\u0000${cue.evidence}`));
  return found.filter((cue) => !old.has(`${cue.kind}\u0000${cue.evidence}`));
}

/** One line for messages: `an instruction aimed at the model: "Before answering, …"`. */
export function describeCues(cues: readonly PoisoningCue[]): string {
  return cues.map((cue) => `${cue.label}: "${cue.evidence}"`).join('; ');
}
