/**
 * Trust for the CLI (docs/formats.md §10): `check`, `pin` and `history` contact a folder's servers
 * only when the folder is trusted for the run (`--trust`, `TOOLPIN_TRUST=1`) or recorded with
 * `toolpin trust`, and then only the recorded command lines and credential URLs.
 *
 * `toolpin trust [DIR]` shows what the folder would run (commands with their literal env values,
 * the files they run, URLs and the credentials sent) and records it: on a terminal it asks first
 * (`--yes` records without asking; declining exits 1), without one it records and prints, so
 * scripts keep working. `--list` shows the records; `--revoke` removes one. The record lives in the user's configuration folder, never in
 * the repository, so a repository cannot trust itself.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import type { ConnectorModel } from '../core/documents/connector';
import { analyzeDocument, connectorOf } from '../core/documents/documents';
import { pinKindOfFile } from '../core/documents/kinds/registry';
import type { ServerRegistry } from '../core/verify/registry';
import { serverAction, type ServerAction } from '../core/trust';
import { commandFileDigests } from '../io/commandFiles';
import { buildWorkspaceRegistry } from '../engine/workspaceRegistry';
import { canonicalFolder, TrustStore, trustFilePath } from '../io/trustStore';
import { findDocuments } from '../engine/nodeFileSystem';
import { checkWorkspaceFolder } from './checkCommand';
import { neutralize as neutralizeForTerminal } from './pinCommand';
import { type CliIo, readIfPresent } from './io';

type Env = Readonly<Record<string, string | undefined>>;

/** The registry of a folder as `check` would build it: its connector files and mcp.json files. */
export async function folderRegistry(io: CliIo, folder: string, env: Env): Promise<ServerRegistry> {
  const { files } = await findDocuments([folder]);
  const connectors: Array<{ path: string; model: ConnectorModel }> = [];
  for (const file of files) {
    const kind = pinKindOfFile(file);
    if (!kind || kind.servers === 'none') continue;
    try {
      const model = connectorOf(analyzeDocument(kind.id, await io.readFile(file), file));
      if (model && model.instances.length > 0) connectors.push({ path: file, model });
    } catch {
      // An unreadable connector declares nothing that could run.
    }
  }
  return buildWorkspaceRegistry({
    workspaceFolder: folder,
    connectors,
    readFile: (file) => readIfPresent(io, file),
    variables: { env, userHome: os.homedir() },
  });
}

export interface TrustArgs {
  readonly folder: string | undefined;
  readonly list: boolean;
  readonly revoke: boolean;
  /** Record without asking, even on a terminal. */
  readonly yes?: boolean;
  readonly env?: Env;
}

export async function trustCommand(io: CliIo, args: TrustArgs): Promise<number> {
  const env = args.env ?? process.env;
  const store = new TrustStore(trustFilePath(env, os.homedir()), (message) => io.stderr(`${message}\n`));
  if (args.list) {
    const record = await store.read();
    const folders = Object.entries(record.folders).sort(([a], [b]) => a.localeCompare(b));
    if (folders.length === 0) io.stdout(`No folder is trusted (${store.file} holds no record).\n`);
    for (const [folder, entry] of folders) {
      io.stdout(`${folder}  (trusted ${entry.trustedAt || 'at an unknown time'})\n`);
      for (const server of entry.servers) io.stdout(`  ${server.name}: ${neutralizeForTerminal(server.display)}\n`);
      if (entry.servers.length === 0) io.stdout('  (no command or credential URL)\n');
    }
    return 0;
  }
  const folder = canonicalFolder(path.resolve(io.cwd, args.folder ?? '.'));
  const display = path.relative(io.cwd, folder) || 'the current folder';
  if (args.revoke) {
    const removed = await store.revoke(folder);
    const subject = display.charAt(0).toUpperCase() + display.slice(1);
    io.stdout(removed ? `${subject} is no longer trusted.\n` : `${subject} was not trusted; nothing to revoke.\n`);
    return 0;
  }
  if (!(await checkWorkspaceFolder(io, 'trust', folder))) return 2;
  const registry = await folderRegistry(io, folder, env);
  const actions = registry.definitions.flatMap((definition) => {
    const action = serverAction(definition, commandFileDigests(definition));
    return action?.needsApproval ? [{ name: definition.name, action }] : [];
  });
  const servers = actions.map(({ name, action }) => ({ name, fingerprint: action.fingerprint, display: action.display }));
  const ask = io.stdinIsTerminal === true && !args.yes && io.ask !== undefined;
  io.stdout(ask ? `Trusting ${display} lets Toolpin run, in ${folder}:\n` : `Trusted ${display}. Toolpin may now run, in ${folder}:\n`);
  showActions(io, actions);
  if (ask) {
    const answer = (await io.ask!('Record this trust? [y/N] ')).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') {
      io.stdout('Nothing recorded; the folder stays as it was.\n');
      return 1;
    }
  }
  await store.trust(folder, servers);
  if (ask) io.stdout(`Trusted ${display}.\n`);
  io.stdout('A server added or changed later (its command, a script it runs, an env value, or what it sends) is not trusted until you run toolpin trust again.\n');
  return 0;
}

/** What the record binds, one server a line, with a warning under each env variable that changes what code loads. */
function showActions(io: CliIo, actions: ReadonlyArray<{ name: string; action: ServerAction }>): void {
  for (const { name, action } of actions) {
    io.stdout(`  ${name}: ${neutralizeForTerminal(action.display)}\n`);
    for (const variable of action.loaderVariables) io.stdout(`    warning: ${variable} changes what code the command loads; check its value above\n`);
  }
  if (actions.length === 0) io.stdout('  (nothing: the folder declares no stdio command and sends no credential)\n');
}
