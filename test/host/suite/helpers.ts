/**
 * Shared helpers of the in-host test files (not a test file itself: index.ts loads *.test.js only).
 *
 * Waiting rules: never a fixed sleep. Diagnostics are awaited through
 * `vscode.languages.onDidChangeDiagnostics` (the current state is checked first, after
 * subscribing, so an early publication is not missed); things that have no event (activation, a
 * file appearing) are awaited with a bounded poll.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'toolpin.toolpin';
export const LANGUAGE_ID = 'toolpin-blueprint';
export const REVIEW_SCHEME = 'toolpin-review';

/**
 * The pins of the fixture server's echo_upper (test/fixtures/servers/fixture-server.mjs):
 * REFERENCE as it starts; V2 after the runner's control document (version 2, written by
 * test/host/run-code-server.mjs: the input schema gains an optional "locale"); V3 after the suite's
 * own rewrite (drift.test.ts: also "maxLength"). Computed with `toolpin hash`; the suite checks V2
 * independently too (fnv1a64 of the store entry it writes).
 */
export const ECHO_PIN = {
  REFERENCE: 'fnv1a64:a76fe8d6d023fca0',
  V2: 'fnv1a64:ee8794563c71bd36',
  V3: 'fnv1a64:7a2dff2dd19a40ec',
} as const;

/** echo_upper's input schema in control version 3 (the suite writes it; see ECHO_PIN.V3). */
export const ECHO_SCHEMA_V3 = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'Text to upper-case' },
    locale: { type: 'string', description: 'BCP 47 locale for upper-casing' },
    maxLength: { type: 'integer', description: 'Truncate the result' },
  },
  required: ['text'],
};

/** What the launcher passes through the payload's extensionEnvironment. */
export const hostEnv = {
  /** dev | vsix (run-code-server.mjs), electron (runTestElectron), or unset. */
  mode: process.env.TOOLPIN_HOST_MODE,
  /** "untrusted" when the launcher opened the workspace with workspace trust on and not granted. */
  trust: process.env.TOOLPIN_HOST_TRUST === 'untrusted' ? ('untrusted' as const) : ('trusted' as const),
  /** The fixture server's --control-file (absolute; in the run folder, outside the workspace). */
  controlFile: process.env.TOOLPIN_HOST_CONTROL_FILE,
  /** The fixture server's --pid-file: exists once a fixture server has started. */
  pidFile: process.env.TOOLPIN_HOST_PID_FILE,
  /** "first-open" in the launcher's second, fresh window (index.ts then loads firstOpen.test.js only). */
  suite: process.env.TOOLPIN_HOST_SUITE,
};

/**
 * Tests that need the live fixture server call this first: a launcher that did not prepare the
 * workspace (.mcp.json, control file) fails them loudly instead of skipping them.
 */
export function requireLiveFixture(): { controlFile: string; pidFile: string } {
  assert.ok(
    hostEnv.controlFile && hostEnv.pidFile,
    'TOOLPIN_HOST_CONTROL_FILE / TOOLPIN_HOST_PID_FILE are not set: the launcher must write the workspace\'s ' +
      '.mcp.json (server "demo" = the fixture MCP server with --control-file and --pid-file) and pass both paths ' +
      '(see test/host/run-code-server.mjs)',
  );
  return { controlFile: hostEnv.controlFile, pidFile: hostEnv.pidFile };
}

/** Workspace file URI; the launcher opens a copy of test/host/workspace/ as the only folder. */
export function workspaceFile(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the launcher must open the workspace copy)');
  return vscode.Uri.joinPath(folder.uri, name);
}

export function toolpinDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'toolpin');
}

export function codeOf(diagnostic: vscode.Diagnostic): string | number | undefined {
  const code = diagnostic.code;
  return typeof code === 'object' && code !== null ? code.value : code;
}

export function withCode(uri: vscode.Uri, code: string): vscode.Diagnostic[] {
  return toolpinDiagnostics(uri).filter((d) => codeOf(d) === code);
}

export function describeDiagnostics(diagnostics: readonly vscode.Diagnostic[]): string {
  if (diagnostics.length === 0) return '(none)';
  return diagnostics
    .map((d) => {
      const r = d.range;
      return `${d.source}/${String(codeOf(d))} ${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character} ${d.message}`;
    })
    .join('\n  ');
}

/**
 * Resolves with the diagnostics of `uri` once `accept` returns true for them: checked at once
 * (after subscribing) and on every `onDidChangeDiagnostics` event that names `uri`. Rejects after
 * `timeoutMs` with what was last seen.
 */
export function waitForDiagnostics(
  uri: vscode.Uri,
  accept: (all: vscode.Diagnostic[], changed: boolean) => boolean,
  timeoutMs: number,
  what: string,
): { done: Promise<vscode.Diagnostic[]>; dispose(): void } {
  const key = uri.toString();
  let subscription: vscode.Disposable | undefined;
  let timer: NodeJS.Timeout | undefined;
  const dispose = () => {
    subscription?.dispose();
    if (timer) clearTimeout(timer);
  };
  const done = new Promise<vscode.Diagnostic[]>((resolve, reject) => {
    const check = (changed: boolean) => {
      const all = vscode.languages.getDiagnostics(uri);
      if (accept(all, changed)) {
        dispose();
        resolve(all);
      }
    };
    subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((u) => u.toString() === key)) check(true);
    });
    timer = setTimeout(() => {
      dispose();
      reject(
        new Error(
          `timed out after ${timeoutMs} ms waiting for ${what} on ${uri.path}; diagnostics now:\n  ` +
            describeDiagnostics(vscode.languages.getDiagnostics(uri)),
        ),
      );
    }, timeoutMs);
    check(false);
  });
  return { done, dispose };
}

/** waitForDiagnostics for the common case: the toolpin diagnostics of `uri` satisfy `accept`. */
export async function diagnosticsWhere(
  uri: vscode.Uri,
  accept: (toolpin: vscode.Diagnostic[]) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<vscode.Diagnostic[]> {
  const wait = waitForDiagnostics(uri, (all) => accept(all.filter((d) => d.source === 'toolpin')), timeoutMs, what);
  try {
    return (await wait.done).filter((d) => d.source === 'toolpin');
  } finally {
    wait.dispose();
  }
}

/**
 * diagnosticsWhere, started before an action and awaited after it. Marked as handled at once, so a
 * test that fails between the two leaves no unhandled rejection behind (awaiting it still throws).
 */
export function diagnosticsAfter(
  uri: vscode.Uri,
  accept: (toolpin: vscode.Diagnostic[]) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<vscode.Diagnostic[]> {
  const waiting = diagnosticsWhere(uri, accept, what, timeoutMs);
  waiting.catch(() => undefined);
  return waiting;
}

/** Polls a condition that has no event, at a short interval, for at most `timeoutMs`. */
export async function pollUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Opens (and shows) a workspace file and waits until the extension is active. */
export async function openAndActivate(name: string): Promise<vscode.TextDocument> {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this host`);
  const document = await vscode.workspace.openTextDocument(workspaceFile(name));
  await vscode.window.showTextDocument(document);
  await pollUntil(() => extension.isActive, 20_000, `${EXTENSION_ID} to activate`);
  return document;
}

/** The position `delta` characters into the `n`-th (0-based) occurrence of `needle`. */
export function positionOf(document: vscode.TextDocument, needle: string, n = 0, delta = 1): vscode.Position {
  const text = document.getText();
  let at = -1;
  for (let i = 0; i <= n; i++) {
    at = text.indexOf(needle, at + 1);
    assert.ok(at !== -1, `${document.uri.path} has fewer than ${n + 1} occurrence(s) of ${needle}`);
  }
  return document.positionAt(at + delta);
}

export function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/** The text of every hover part at a position, joined. */
export async function hoverText(uri: vscode.Uri, position: vscode.Position): Promise<string> {
  const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, position)) ?? [];
  return hovers
    .flatMap((hover) => hover.contents)
    .map((content) => (typeof content === 'string' ? content : content.value))
    .join('\n---\n');
}

export async function codeActions(uri: vscode.Uri, range: vscode.Range, kind?: string): Promise<vscode.CodeAction[]> {
  const actions = await vscode.commands.executeCommand<Array<vscode.CodeAction | vscode.Command>>('vscode.executeCodeActionProvider', uri, range, kind);
  // A bare Command has a string `command`; a CodeAction's `command`, if any, is an object.
  return (actions ?? []).filter((action): action is vscode.CodeAction => typeof (action as vscode.Command).command !== 'string');
}

/**
 * The language client the extension exports from `activate` (client/src/extension.ts: ToolpinApi),
 * used to send the server's custom requests directly where the UI would need a modal click.
 */
export interface ToolpinTestApi {
  readonly client:
    | {
        sendRequest<R>(method: string, params?: unknown): Promise<R>;
        readonly protocol2CodeConverter: { asWorkspaceEdit(edit: unknown): Promise<vscode.WorkspaceEdit> };
      }
    | undefined;
}

export function toolpinApi(): ToolpinTestApi {
  const extension = vscode.extensions.getExtension<ToolpinTestApi>(EXTENSION_ID);
  assert.ok(extension?.isActive, `${EXTENSION_ID} is not active`);
  const api = extension.exports;
  assert.ok(api && 'client' in api, `${EXTENSION_ID} must return { client } from activate (the test hook)`);
  assert.ok(api.client, `${EXTENSION_ID} exports no running language client`);
  return api;
}

/** FNV-1a 64 of the UTF-8 bytes of `text`, as 16 hex digits: an independent check of a pin. */
export function fnv1a64Hex(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/** JSON with object keys sorted (RFC 8785 for the plain strings and arrays of the fixtures). */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${sortedJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
