/**
 * The trust a CLI run works under (docs/formats.md §10): the folder is trusted for the run by
 * `--trust` or `TOOLPIN_TRUST=1`, else as `toolpin trust` recorded it, else not at all.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import type { ServerDefinition } from '../core/verify/registry';
import { decideTrust, type FolderTrust, type TrustVerdict } from '../core/trust';
import { commandFileDigests } from '../io/commandFiles';
import { TrustStore, trustFilePath } from '../io/trustStore';
import type { CliIo } from './io';

type Env = Readonly<Record<string, string | undefined>>;

/** True when the run itself is trusted: `--trust`, or `TOOLPIN_TRUST=1` in the environment. */
export function sessionTrusted(flag: boolean | undefined, env: Env): boolean {
  return flag === true || env.TOOLPIN_TRUST === '1' || env.TOOLPIN_TRUST === 'true';
}

/** The folder trust a CLI run works under, and the decision function the inventory asks. */
export async function cliTrust(workspaceFolder: string, flag: boolean | undefined, env: Env, io: CliIo): Promise<{ trust: FolderTrust; decide: (definition: ServerDefinition) => TrustVerdict }> {
  const display = path.relative(io.cwd, workspaceFolder) || '.';
  let trust: FolderTrust;
  if (sessionTrusted(flag, env)) trust = { kind: 'session' };
  else {
    const store = new TrustStore(trustFilePath(env, os.homedir()), (message) => io.stderr(`${message}\n`));
    trust = await store.folderTrust(workspaceFolder, `pass --trust to trust it for this run, or run \`toolpin trust ${display}\` to record it`);
  }
  return { trust, decide: (definition) => decideTrust(definition, trust, commandFileDigests) };
}
