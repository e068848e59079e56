/**
 * The language server's trust decision: whether a server definition may be contacted, from what
 * the client said about workspace trust and what the user recorded with `toolpin trust`. The
 * decision itself is the core's (core/trust.ts); this module holds the state it is made from.
 *
 * Contract:
 * - servers from the `toolpin.servers` setting (`workspace/configuration`, `initializationOptions`)
 *   are workspace content: clients such as coc.nvim and neoconf serve project-local settings there,
 *   so nothing of theirs starts in a folder that is not trusted (the client says so, or the folder
 *   has a `toolpin trust` record; `toolpin trust` cannot see editor settings, so a record covers
 *   them as a folder, not one by one);
 * - a definition whose folder is not a workspace folder (a lone file, or a document that is not a
 *   local `file:` one: git:, vscode-vfs:, untitled:) is never trusted: such documents get
 *   structure checks only;
 * - VS Code says true or false (workspace trust) and that decides; a client that says nothing
 *   trusts only folders recorded with `toolpin trust`, read at start-up, on folder changes and on
 *   every refresh (so `toolpin trust` takes effect without a restart).
 */
import { decideTrust, type FolderTrust, type TrustVerdict } from './core/trust';
import type { ServerDefinition } from './core/verify/registry';
import { commandFileDigests } from './io/commandFiles';
import type { TrustStore } from './io/trustStore';
import * as path from 'node:path';

export class ServerTrust {
  /** What the client said (VS Code: workspace trust); undefined when it said nothing. */
  private client: boolean | undefined;
  private recorded = new Map<string, FolderTrust>();

  constructor(
    private readonly store: TrustStore,
    private readonly isWorkspaceFolder: (folder: string) => boolean,
  ) {}

  /** The client's word on trust, from the initialization options or a trust notification. */
  clientSays(trusted: boolean | undefined): void {
    this.client = trusted;
  }

  /** Reads what `toolpin trust` recorded for the workspace folders. */
  async readRecorded(folders: readonly string[]): Promise<void> {
    const next = new Map<string, FolderTrust>();
    for (const folder of folders) next.set(folder, await this.store.folderTrust(folder, `run \`toolpin trust ${folder}\` to trust it`));
    this.recorded = next;
  }

  /**
   * Whether a place a setting names may be sent credentials: the team store of
   * `toolpin.history.store` (the password from PGPASSWORD, `.pgpass` or the editor's secret
   * storage goes there). Settings are workspace content, as the `toolpin.servers` setting's are
   * (see the contract): the client's word decides, and a client that says nothing needs a
   * `toolpin trust` record on a workspace folder. `what` completes "Toolpin did not …".
   */
  decideSetting(folders: readonly string[], what: string): TrustVerdict {
    if (this.client === true) return { trusted: true };
    if (this.client === false) return { trusted: false, reason: `the workspace is not trusted, so Toolpin did not ${what} (trust the workspace in VS Code to read it)` };
    if (folders.some((folder) => this.recorded.get(folder)?.kind === 'recorded')) return { trusted: true };
    const howToTrust = folders.length > 0 ? `run \`toolpin trust ${folders[0]!}\` to trust it` : 'open a workspace folder and trust it';
    return { trusted: false, reason: `the workspace is not trusted, so Toolpin did not ${what} (${howToTrust})` };
  }

  /** The trust that covers a server definition (see the contract above). */
  decide(definition: ServerDefinition): TrustVerdict {
    if (!path.isAbsolute(definition.cwd) || (definition.origin.file !== undefined && !path.isAbsolute(definition.origin.file))) {
      return decideTrust(definition, { kind: 'untrusted', howToTrust: 'a document that is not a local file (git:, vscode-vfs:, untitled:) gets structure checks only' });
    }
    if (!this.isWorkspaceFolder(definition.cwd)) {
      return decideTrust(definition, { kind: 'untrusted', howToTrust: 'a file outside every workspace folder is never trusted; open its folder and trust it' });
    }
    if (this.client === true) return { trusted: true };
    if (this.client === false) return decideTrust(definition, { kind: 'untrusted', howToTrust: 'trust the workspace in VS Code to verify its pins' });
    const recorded = this.recorded.get(definition.cwd) ?? { kind: 'untrusted', howToTrust: `run \`toolpin trust ${definition.cwd}\` to trust it` };
    // A setting's server in a recorded folder: the folder's record covers it (see the contract).
    if (definition.origin.kind === 'user-setting' && recorded.kind === 'recorded') return { trusted: true };
    return decideTrust(definition, recorded, commandFileDigests);
  }
}
