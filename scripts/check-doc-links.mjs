#!/usr/bin/env node
// Checks that every relative link in README.md, docs/ and the packages' READMEs resolves to a
// file or folder of the repository (and, for a link to a heading of a Markdown file, that the
// heading exists), and that no command in their shell blocks (```sh, or a `$ ` prompt line)
// starts with a bin that only exists once the package is installed from the registry (`miner`,
// `tensormine-validator`, ...): in a clone those resolve to nothing, or to whatever the public
// registry serves under that name (use `npx miner`, `npm start -w @tensormine/validator`).
// Run by `npm run check:docs` and CI. Exit 1 with the list of problems.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function markdownFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorsCache = new Map();
function anchorsOf(file) {
  if (!anchorsCache.has(file)) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    const seen = new Map();
    const anchors = new Set();
    for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
      const base = slug(m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
    anchorsCache.set(file, anchors);
  }
  return anchorsCache.get(file);
}

const files = [
  join(root, 'README.md'),
  ...markdownFiles(join(root, 'docs')),
  ...readdirSync(join(root, 'packages'))
    .map((p) => join(root, 'packages', p, 'README.md'))
    .filter((p) => existsSync(p)),
];
const broken = [];
for (const file of files) {
  // Code blocks and inline code are not links.
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(root, file)}:${i + 1}`;
      if (!existsSync(resolved)) {
        broken.push(`${where}: ${target} (no such file)`);
        continue;
      }
      if (
        anchor &&
        resolved.endsWith('.md') &&
        statSync(resolved).isFile() &&
        !anchorsOf(resolved).has(anchor)
      ) {
        broken.push(`${where}: ${target} (no heading #${anchor})`);
      }
    }
  });
}
/** Bins of the workspace packages: not on PATH in a clone (only `npx <bin>` finds them). */
const bins = new Set(
  readdirSync(join(root, 'packages')).flatMap((p) => {
    const manifest = join(root, 'packages', p, 'package.json');
    if (!existsSync(manifest)) return [];
    const bin = JSON.parse(readFileSync(manifest, 'utf8')).bin ?? {};
    return typeof bin === 'string' ? [] : Object.keys(bin);
  }),
);
for (const file of files) {
  const lines = readFileSync(file, 'utf8').split('\n');
  let fence; // the info string of the open code block, if any
  lines.forEach((line, i) => {
    const open = /^\s*```(\S*)/.exec(line);
    if (open) {
      fence = fence === undefined ? open[1] : undefined;
      return;
    }
    if (fence === undefined) return;
    const shell = ['sh', 'bash', 'shell', 'console'].includes(fence);
    const prompt = /^\s*\$ /.test(line);
    if (!shell && !prompt) return;
    const command = line
      .replace(/^\s*\$ /, '')
      // `PUBKEY=$(npx miner keys show)`: the command substituted is the one that runs.
      .replace(/^\s*[A-Z_][A-Z0-9_]*="?\$\(/, '')
      .replace(/^\s*(?:sudo(?: -u \S+)? )?(?:env )?(?:[A-Z_][A-Z0-9_]*=\S* )*/, '');
    const word = command.split(/\s/)[0];
    if (bins.has(word)) {
      broken.push(
        `${relative(root, file)}:${i + 1}: \`${word}\` is not on PATH in a clone (npx ${word}, or npm start -w)`,
      );
    }
  });
}

if (broken.length > 0) {
  console.error(
    `broken relative links and commands (${broken.length}):\n${broken.map((b) => `  ${b}`).join('\n')}`,
  );
  process.exit(1);
}
console.log(`doc links and commands ok: ${files.length} files`);
