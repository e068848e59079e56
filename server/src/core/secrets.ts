/**
 * Credentials written where they would be logged.
 *
 * Principals never reach the dispatch log, and an immutable log cannot be redacted later, so a
 * value under a key that names a credential must be a `{"$secret": "NAME"}` reference (blueprint
 * arguments) or a `credentialRef` (connectors), never a literal string.
 */
import { type JsonNode, objectProperties, spanOf } from './json/jsonDocument';
import { type Problem, problem } from './problems';

// Words that name a credential when they end a key. "token" alone is a credential
// ("github_token"), but "max_tokens" and "tokenCount" are not, so only the last word counts.
const CREDENTIAL_LAST_WORDS = new Set([
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'authorization',
  'credential',
  'credentials',
  'apikey',
  'bearer',
  'cookie',
]);
// Two-word endings: "api_key", "privateKey", "access-key", "secret_key", "client_secret".
const CREDENTIAL_LAST_PAIRS = new Set(['api key', 'private key', 'access key', 'secret key', 'session key', 'auth key']);

/**
 * Splits camelCase, snake_case, kebab-case and dotted keys into lowercase words. Only the last 64
 * characters are split: the words that matter are the last ones, and the split's regular
 * expressions must never see a pathological (huge) key.
 */
export function keyWords(key: string): string[] {
  return key
    .slice(-64)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/**
 * Answers of {@link isCredentialKey} by key: documents repeat the same few argument keys thousands
 * of times, and splitting a key into words is regular-expression work. Bounded: cleared when full.
 */
const credentialKeyAnswers = new Map<string, boolean>();
const CREDENTIAL_KEY_ANSWERS_LIMIT = 4096;

/** True when a key names a credential (its last word, or last two words, say so). */
export function isCredentialKey(key: string): boolean {
  let answer = credentialKeyAnswers.get(key);
  if (answer === undefined) {
    answer = namesCredential(key);
    if (credentialKeyAnswers.size >= CREDENTIAL_KEY_ANSWERS_LIMIT) credentialKeyAnswers.clear();
    credentialKeyAnswers.set(key, answer);
  }
  return answer;
}

function namesCredential(key: string): boolean {
  const words = keyWords(key);
  if (words.length === 0) return false;
  const last = words[words.length - 1]!;
  if (CREDENTIAL_LAST_WORDS.has(last)) return true;
  if (words.length >= 2 && CREDENTIAL_LAST_PAIRS.has(`${words[words.length - 2]} ${last}`)) return true;
  return false;
}

/** A `{"$secret": …}` object, well formed or not. */
export function isSecretReference(node: JsonNode): boolean {
  return node.type === 'object' && objectProperties(node).some((property) => property.key === '$secret');
}

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Walks a value that will be logged (step arguments) and reports credential-looking literals
 * (TP205) and malformed `$secret` references (TP207). `where` names the value for messages.
 */
export function checkLoggedValue(node: JsonNode, where: string, problems: Problem[]): void {
  if (node.type === 'array') {
    (node.children ?? []).forEach((child) => checkLoggedValue(child, where, problems));
    return;
  }
  if (node.type !== 'object') return;
  if (isSecretReference(node)) {
    checkSecretReference(node, problems);
    return;
  }
  for (const property of objectProperties(node)) {
    const value = property.valueNode;
    if (!value) continue;
    if (value.type === 'string' && isCredentialKey(property.key) && String(value.value).length > 0) {
      problems.push(
        problem(
          'TP205',
          spanOf(value),
          `"${property.key}" in ${where} looks like a credential written as a literal; the dispatch log is immutable, so write a reference instead: {"$secret": "NAME"}`,
          { data: { key: property.key } },
        ),
      );
      continue;
    }
    checkLoggedValue(value, where, problems);
  }
}

function checkSecretReference(node: JsonNode, problems: Problem[]): void {
  for (const property of objectProperties(node)) {
    if (property.key !== '$secret') {
      problems.push(
        problem('TP207', spanOf(property.keyNode), `a {"$secret": …} reference holds only the "$secret" key; remove "${property.key}"`),
      );
      continue;
    }
    const value = property.valueNode;
    if (!value) continue;
    if (value.type !== 'string' || !SECRET_NAME.test(String(value.value))) {
      problems.push(
        problem(
          'TP207',
          spanOf(value),
          'a $secret reference names a secret, like "GITHUB_TOKEN": letters, digits and underscores, not starting with a digit',
        ),
      );
    }
  }
}
