import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { installNote, npmNodeVersion } from '../../../scripts/install-note.mjs';

/**
 * The note the README's install ends with (the root's postinstall): it names the Node that ran
 * npm, and is silent when that Node is new enough, as under `npx -y -p node@24 npm install`,
 * whose inner npm inherits the outer npx's user agent naming the system Node.
 */

const OUTER_AGENT = 'npm/11.19.1 node/v20.20.2 linux x64 workspaces/false';

/** A stand-in for a Node binary that reports `version`. */
function fakeNode(version: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tm-install-note-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'node');
  writeFileSync(path, `#!/bin/sh\necho ${version}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('the install note', () => {
  it('reads the Node npm runs on, not the user agent it inherited', () => {
    expect(npmNodeVersion({ npm_node_execpath: process.execPath, npm_config_user_agent: OUTER_AGENT })).toBe(
      process.versions.node,
    );
    expect(
      npmNodeVersion({ npm_node_execpath: fakeNode('24.21.0'), npm_config_user_agent: OUTER_AGENT }),
    ).toBe('24.21.0');
    expect(npmNodeVersion({ npm_node_execpath: fakeNode('20.20.2') })).toBe('20.20.2');
    // No execpath (an older npm): the user agent.
    expect(npmNodeVersion({ npm_config_user_agent: OUTER_AGENT })).toBe('20.20.2');
    expect(npmNodeVersion({})).toBeUndefined();
  });

  it('says nothing after an install on Node 24, and the right advice after one on Node 20', () => {
    expect(installNote('24.21.0', '>=22.19', 'Node 24.21.0')).toBeUndefined();
    expect(installNote('22.19.0', '>=22.19', 'Node 24.21.0')).toBeUndefined();
    expect(installNote(undefined, '>=22.19', 'Node 24.21.0')).toBeUndefined();
    expect(installNote('20.20.2', '>=22.19', 'Node 24.21.0')).toBe(
      [
        "note: npm ran on Node 20.20.2, below the packages' floor (>=22.19): the EBADENGINE",
        '  warnings above are about that Node. Nothing here runs on it: npx, npm run and npm test use the',
        '  pinned Node 24.21.0 (node_modules/.bin/node). To install without them: npx -y -p node@24 npm install',
      ].join('\n'),
    );
    expect(installNote('22.18.9', '>=22.19', 'Node 24.21.0')).toContain('npm ran on Node 22.18.9');
  });
});
