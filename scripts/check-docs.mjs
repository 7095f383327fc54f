#!/usr/bin/env node
// Checks every relative link in the Markdown docs: README.md, docs/**/*.md (not the generated
// docs/api) and packages/*/README.md. A link must point to a file or folder that exists, and a
// `#anchor` into a Markdown file must name one of its headings (GitHub's slug rules).
// Exits 1 listing the broken links. No dependencies: `node scripts/check-docs.mjs`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function markdownFiles() {
  const files = [join(root, 'README.md')];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join(root, 'docs', 'api')) walk(path);
      } else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk(join(root, 'docs'));
  for (const name of readdirSync(join(root, 'packages'))) {
    const readme = join(root, 'packages', name, 'README.md');
    if (existsSync(readme)) files.push(readme);
  }
  return files.filter((file) => existsSync(file));
}

/** The text with fenced code blocks and inline code blanked out (line numbers kept). */
function withoutCode(text) {
  const fenced = text.replace(/^( {0,3})(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, (block) =>
    block.replace(/[^\n]/g, ' '),
  );
  return fenced.replace(/`+[^`\n]*`+/g, (code) => ' '.repeat(code.length));
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_~]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();
/** The anchors a Markdown file offers: its headings (outside code blocks) and `<a name|id>`. */
function anchorsOf(file) {
  let anchors = anchorCache.get(file);
  if (anchors !== undefined) return anchors;
  anchors = new Set();
  const text = readFileSync(file, 'utf8');
  const original = text.split('\n');
  const masked = withoutCode(text).split('\n');
  const counts = new Map();
  masked.forEach((line, index) => {
    if (!/^ {0,3}#{1,6}\s/.test(line)) return;
    const heading = (original[index] ?? '').replace(/^ {0,3}#{1,6}\s+/, '').replace(/\s+#+\s*$/, '');
    const base = slug(heading);
    const seen = counts.get(base) ?? 0;
    counts.set(base, seen + 1);
    anchors.add(seen === 0 ? base : `${base}-${seen}`);
  });
  for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
  anchorCache.set(file, anchors);
  return anchors;
}

const linkPattern = /!?\[(?:[^\]\n]|\][^(\n])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const referencePattern = /^ {0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+["'(].*)?$/gm;

function linksOf(file) {
  const text = withoutCode(readFileSync(file, 'utf8'));
  const links = [];
  for (const pattern of [linkPattern, referencePattern]) {
    for (const match of text.matchAll(pattern)) {
      const line = text.slice(0, match.index).split('\n').length;
      links.push({ target: match[1] ?? '', line });
    }
  }
  return links;
}

const broken = [];
let checked = 0;
for (const file of markdownFiles()) {
  for (const { target, line } of linksOf(file)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // URLs, mailto:
    checked++;
    const [rawPath = '', anchor] = target.split('#', 2);
    const path = decodeURIComponent(rawPath.split('?')[0] ?? '');
    const destination = path === '' ? file : resolve(dirname(file), path);
    const where = `${relative(root, file)}:${line}`;
    if (!existsSync(destination)) {
      broken.push(`${where}: ${target} → ${relative(root, destination)} does not exist`);
      continue;
    }
    if (anchor && statSync(destination).isFile() && destination.endsWith('.md')) {
      if (!anchorsOf(destination).has(anchor.toLowerCase())) {
        broken.push(`${where}: ${target} → no heading '#${anchor}' in ${relative(root, destination)}`);
      }
    }
  }
}

if (broken.length > 0) {
  console.error(`${broken.length} broken link(s) of ${checked} relative links checked:`);
  for (const line of broken) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`docs links: ${checked} relative links checked, none broken`);
