// npm run image:build — builds the cryptomcp OCI image without a Docker daemon, from the Dockerfile
// itself: its runtime stage's COPY lines, ENV, WORKDIR, USER, EXPOSE, LABEL and CMD are read here,
// so the Dockerfile stays the one list of what the image holds (test/image checks both agree).
//
// Why these tools: the machines that build and test the project have no Docker engine and no
// container runtime, only Debian's packages. `mmdebstrap` makes the Debian base (bookworm, the
// distribution under node:24-slim; the `essential` variant plus libstdc++6 and ca-certificates,
// which is what the Node binary links and what TLS needs); Node 24 is the binary of the `node` npm
// package the project already installs; production node_modules are the lockfile's non-dev
// packages copied from the checkout's node_modules (see productionModules); `umoci` (Debian's, OCI's own reference tool for image layouts) packs the
// tree into an OCI image layout with the Dockerfile's config. buildah needs a storage driver and
// user namespaces set up for it; umoci needs neither.
//
//   node scripts/build-image.ts [--out DIR]   → DIR/oci (an OCI image layout, tag "cryptomcp:<version>")
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const DEBIAN_SUITE = 'bookworm';
const BASE_PACKAGES = ['libstdc++6', 'ca-certificates'];

/** What the Dockerfile's runtime stage says the image is. */
export interface ImageSpec {
  /** `COPY <src> <dest>` of the runtime stage that copy from the build context. */
  copies: { src: string; dest: string }[];
  /** `COPY --from=build` paths: produced by the build stage (node_modules, web/dist). */
  fromBuild: { src: string; dest: string }[];
  /** The build stage's shell commands after `npm prune`: what it deletes from node_modules. */
  cleanup: string[];
  env: Record<string, string>;
  workdir: string;
  user: string;
  cmd: string[];
  exposed: string[];
  labels: Record<string, string>;
}

/** Joins continuation lines and drops comments, as Docker reads the file. */
function instructions(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (!line && !current)) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    out.push((current + line).trim());
    current = '';
  }
  return out.filter(Boolean);
}

/** Splits `KEY=VALUE KEY2="V 2"` pairs (ENV and LABEL). */
function pairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) out[m[1]!] = m[2]!.startsWith('"') ? m[2]!.slice(1, -1) : m[2]!;
  return out;
}

export function readDockerfile(file = path.join(ROOT, 'Dockerfile')): ImageSpec {
  const all = instructions(fs.readFileSync(file, 'utf8'));
  // Stage 0 is what comes before the first FROM (global ARGs); then one list per FROM.
  const stages: string[][] = [[]];
  for (const ins of all) {
    if (ins.startsWith('FROM ')) stages.push([]);
    stages.at(-1)!.push(ins);
  }
  const build = stages[1]!;
  const runtime = stages.at(-1)!;
  const args = Object.fromEntries(all.filter((i) => i.startsWith('ARG ') && i.includes('=')).map((i) => i.slice(4).split('=') as [string, string]));
  const expand = (v: string) => v.replace(/\$\{(\w+)\}/g, (_, k: string) => args[k] ?? `\${${k}}`);
  const spec: ImageSpec = { copies: [], fromBuild: [], cleanup: [], env: {}, workdir: '/', user: '0', cmd: [], exposed: [], labels: {} };
  for (const ins of runtime) {
    const [op, ...rest] = ins.split(/\s+/);
    const body = rest.join(' ');
    if (op === 'COPY') {
      const from = rest[0]!.startsWith('--from=');
      const parts = rest.filter((p) => !p.startsWith('--'));
      const dest = parts.at(-1)!;
      for (const src of parts.slice(0, -1)) (from ? spec.fromBuild : spec.copies).push({ src, dest });
    } else if (op === 'ENV') Object.assign(spec.env, pairs(body));
    else if (op === 'LABEL') Object.assign(spec.labels, Object.fromEntries(Object.entries(pairs(body)).map(([k, v]) => [k, expand(v)])));
    else if (op === 'WORKDIR') spec.workdir = body;
    else if (op === 'USER') spec.user = body;
    else if (op === 'EXPOSE') spec.exposed.push(...rest);
    else if (op === 'CMD') spec.cmd = JSON.parse(body) as string[];
  }
  const install = build.find((i) => i.startsWith('RUN ') && i.includes('npm prune'));
  if (!install) throw new Error('Dockerfile: no RUN line with npm prune in the build stage');
  const steps = install.slice(4).split(/\s&&\s/).map((c) => c.trim());
  spec.cleanup = steps.slice(steps.findIndex((c) => c.startsWith('npm prune')) + 1);
  return spec;
}

/**
 * The build stage's production node_modules (`npm ci` then `npm prune --omit=dev`): every package
 * of package-lock.json not marked dev, at its locked path, copied from the checkout's node_modules,
 * which `npm ci` installed from the same lockfile (packages for other platforms are in the lockfile
 * but not installed, and are skipped as npm skips them). Each package is copied without its own
 * node_modules folder, whose packages are entries of their own. Running `npm ci --omit=dev` again here took
 * 31-46 s of CPU to unpack the same 374 packages from npm's cache.
 */
export function productionModules(stage: string): void {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; link?: boolean }> };
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === '' || entry.dev) continue;
    if (entry.link) throw new Error(`${where} is a link: copy its target instead`);
    const from = path.join(ROOT, where);
    if (!fs.existsSync(from)) continue;
    fs.cpSync(from, path.join(stage, where), {
      recursive: true,
      filter: (src) => path.dirname(src) !== from || path.basename(src) !== 'node_modules',
    });
  }
}

const run = (cmd: string, args: string[], opts: { cwd?: string; quiet?: boolean } = {}) =>
  execFileSync(cmd, args, { cwd: opts.cwd ?? ROOT, stdio: opts.quiet ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'], maxBuffer: 64 << 20 });

/** The host's Debian mirror (the one apt uses here), so the base comes from where packages come from. */
function debianMirror(): string {
  if (process.env.DEBIAN_MIRROR) return process.env.DEBIAN_MIRROR;
  try {
    const sources = fs.readFileSync('/etc/apt/sources.list.d/debian.sources', 'utf8');
    const uri = /^URIs:\s*(\S+\/debian)\s*$/m.exec(sources)?.[1];
    if (uri) return uri;
  } catch {
    // no deb822 sources: fall back to Debian's redirector
  }
  return 'http://deb.debian.org/debian';
}

function du(dir: string): number {
  return Number(run('du', ['-sb', dir], { quiet: true }).toString().split('\t')[0]);
}

export interface BuiltImage {
  layout: string;
  tag: string;
  /** Bytes of the OCI layout's blobs (compressed layers, config, manifest): what a registry stores and a node pulls. */
  compressedBytes: number;
  /** Bytes of the unpacked root filesystem. */
  rootfsBytes: number;
  parts: Record<string, number>;
}

export function buildImage(out: string, opts: { log?: (line: string) => void } = {}): BuiltImage {
  const log = opts.log ?? ((l: string) => console.log(l));
  const spec = readDockerfile();
  const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const tag = `cryptomcp:${version}`;
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const rootfs = path.join(out, 'rootfs');

  log(`base: Debian ${DEBIAN_SUITE} (mmdebstrap essential + ${BASE_PACKAGES.join(', ')}) from ${debianMirror()}`);
  run('mmdebstrap', ['--quiet', '--variant=essential', `--include=${BASE_PACKAGES.join(',')}`, '--skip=output/dev', DEBIAN_SUITE, rootfs, debianMirror()]);
  // What debian:bookworm-slim leaves out too (its dpkg path-excludes): documentation, manual pages
  // and translations, ≈ 40 MB nothing in the image reads.
  for (const dir of ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale']) {
    for (const entry of fs.readdirSync(path.join(rootfs, dir))) fs.rmSync(path.join(rootfs, dir, entry), { recursive: true, force: true });
  }
  const base = du(rootfs);

  // The node user of node:24-slim: uid/gid 1000, which the charts run as.
  fs.appendFileSync(path.join(rootfs, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/sh\n');
  fs.appendFileSync(path.join(rootfs, 'etc/group'), 'node:x:1000:\n');
  fs.mkdirSync(path.join(rootfs, 'home/node'), { recursive: true });
  fs.chownSync(path.join(rootfs, 'home/node'), 1000, 1000);

  // Node 24: the binary the project runs on, without its debug sections.
  const nodeBin = path.join(rootfs, 'usr/local/bin/node');
  fs.mkdirSync(path.dirname(nodeBin), { recursive: true });
  run('objcopy', ['--strip-debug', path.join(ROOT, 'node_modules/node/bin/node'), nodeBin]);
  const nodeBytes = fs.statSync(nodeBin).size;

  // The build stage: production dependencies from the lockfile (productionModules), minus what the
  // Dockerfile removes; web/dist as `npm run build:web` made it.
  const app = path.join(rootfs, spec.workdir.replace(/^\//, ''));
  fs.mkdirSync(app, { recursive: true });
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-image-'));
  try {
    for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(ROOT, f), path.join(stage, f));
    productionModules(stage);
    for (const command of spec.cleanup) run('sh', ['-c', command], { cwd: stage });
    for (const { src, dest } of spec.fromBuild) {
      const from = src.replace(/^\/src\//, '');
      const target = path.join(app, dest.replace(/^\.\//, ''));
      fs.cpSync(from === 'node_modules' ? path.join(stage, 'node_modules') : path.join(ROOT, from), target, { recursive: true });
    }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
  const modulesBytes = du(path.join(app, 'node_modules'));
  // Docker's rule: a destination ending in / is a folder the source goes into.
  for (const { src, dest } of spec.copies) fs.cpSync(path.join(ROOT, src), path.join(app, dest.replace(/^\.\//, ''), dest.endsWith('/') ? path.basename(src) : ''), { recursive: true });
  run('chown', ['-R', '0:0', app]);

  // Pack: an empty image, our tree as its one layer, then the Dockerfile's config.
  const layout = path.join(out, 'oci');
  const bundle = path.join(out, 'bundle');
  run('umoci', ['init', '--layout', layout]);
  run('umoci', ['new', '--image', `${layout}:${tag}`]);
  run('umoci', ['unpack', '--image', `${layout}:${tag}`, bundle], { quiet: true });
  fs.rmSync(path.join(bundle, 'rootfs'), { recursive: true, force: true });
  fs.renameSync(rootfs, path.join(bundle, 'rootfs'));
  run('umoci', ['repack', '--image', `${layout}:${tag}`, bundle], { quiet: true });
  const config = [
    `--config.user=${spec.user}`,
    `--config.workingdir=${spec.workdir}`,
    ...Object.entries({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...spec.env }).map(([k, v]) => `--config.env=${k}=${v}`),
    ...spec.cmd.map((c) => `--config.cmd=${c}`),
    ...spec.exposed.map((p) => `--config.exposedports=${p}/tcp`),
    ...Object.entries({ ...spec.labels, 'org.opencontainers.image.version': version, 'org.opencontainers.image.base.name': `debian:${DEBIAN_SUITE} (mmdebstrap essential)` }).map(([k, v]) => `--config.label=${k}=${v}`),
  ];
  run('umoci', ['config', '--image', `${layout}:${tag}`, ...config]);
  run('umoci', ['gc', '--layout', layout]);
  const rootfsBytes = du(path.join(bundle, 'rootfs'));
  fs.rmSync(bundle, { recursive: true, force: true });
  const compressedBytes = du(path.join(layout, 'blobs'));
  const parts = { debian_base: base, node_binary: nodeBytes, node_modules: modulesBytes, app_rest: rootfsBytes - base - nodeBytes - modulesBytes };
  log(`image ${tag}: ${(compressedBytes / 1e6).toFixed(1)} MB compressed, ${(rootfsBytes / 1e6).toFixed(1)} MB unpacked (${Object.entries(parts).map(([k, v]) => `${k} ${(v / 1e6).toFixed(1)} MB`).join(', ')})`);
  const built = { layout, tag, compressedBytes, rootfsBytes, parts };
  fs.writeFileSync(path.join(out, BUILT), JSON.stringify(built));
  return built;
}

/** Written last into the output folder: the build finished, and what it made. */
export const BUILT = 'built.json';

/**
 * The image in `out`, once a build running elsewhere (npm test starts one in the background while
 * lint and typecheck run) has finished; undefined if that build failed (its log says why).
 */
export async function builtImage(out: string, timeoutMs: number): Promise<BuiltImage | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (fs.existsSync(path.join(out, BUILT))) return JSON.parse(fs.readFileSync(path.join(out, BUILT), 'utf8')) as BuiltImage;
    if (fs.existsSync(path.join(out, 'failed'))) return undefined;
    if (Date.now() > deadline) throw new Error(`no image in ${out} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = path.resolve(i > 0 ? process.argv[i + 1]! : path.join(ROOT, '.data/image'));
  try {
    buildImage(out);
  } catch (err) {
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'failed'), String((err as Error).stack ?? err));
    throw err;
  }
}
