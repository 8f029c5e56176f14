import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Building the native kernels: the C sources (the firmware core's consensus files and the
 * kernels beside them, firmware-sim/native) compiled on first use with the system's C compiler
 * into a shared library in the user's cache, as the firmware's host programs are built for its
 * tests. Nothing is downloaded and nothing prebuilt is shipped: the npm package carries the C
 * sources (dist/c, copied by the build), a checkout uses firmware-sim directly.
 *
 * The library's name is a hash of everything that goes into it (the sources, the compiler and
 * its version, the flags), so a new release, another compiler or edited sources get a new
 * build and a stale library is never loaded; writes go to a temporary file renamed into place,
 * so miners starting together never load a half-written file.
 */

/** The source files, by folder (`core` and `native` under the source root). */
export const NATIVE_SOURCES = {
  core: [
    'sha256.c',
    'sha256.h',
    'tm_core.h',
    'tm_hexchain.c',
    'tm_hexchain.h',
    'tm_selftest.c',
    'tm_selftest.h',
    'tm_tensor.c',
    'tm_tensor.h',
  ],
  native: ['tm_native.h', 'tm_native_sha.h', 'tm_native_cpu.c', 'tm_native_hexchain.c', 'tm_native_tensor.c'],
} as const;

/** Flags of every build: the kernels pick their instruction sets per function (tm_native_sha.h). */
export const NATIVE_CFLAGS: readonly string[] = [
  '-std=gnu11',
  '-O3',
  '-fPIC',
  '-shared',
  '-fvisibility=hidden',
];
/** Added by `strict` builds (the tests and CI): the code must stay warning-free. */
export const NATIVE_STRICT_CFLAGS: readonly string[] = [
  '-Wall',
  '-Wextra',
  '-Werror',
  '-Wshadow',
  '-Wconversion',
  '-Wsign-conversion',
];

const LIBRARY = 'libtmnative.so';
const COMPILE_TIMEOUT_MS = 300_000;

type Env = Readonly<Record<string, string | undefined>>;

/** Why the native kernels cannot be built here, in words fit for the miner's one line. */
export class NativeBuildError extends Error {
  override readonly name = 'NativeBuildError';
}

/**
 * Where the C sources are: dist/c in a built package (copied by `copyNativeSources`), the
 * repository's firmware-sim from source. Undefined when neither is there.
 */
export function nativeSourceRoot(): string | undefined {
  for (const url of [
    new URL('./c/', import.meta.url),
    new URL('../../../../../firmware-sim/', import.meta.url),
  ]) {
    const root = fileURLToPath(url);
    if (existsSync(join(root, 'native', 'tm_native.h')) && existsSync(join(root, 'core', 'tm_tensor.h')))
      return root;
  }
  return undefined;
}

/** Copies the C sources (from `root`, default `nativeSourceRoot()`) into `outDir`/c: the package build's dist/c. */
export function copyNativeSources(outDir: string, root = nativeSourceRoot()): void {
  if (root === undefined) throw new NativeBuildError("the native kernels' C sources are not found");
  for (const [folder, files] of Object.entries(NATIVE_SOURCES)) {
    mkdirSync(join(outDir, 'c', folder), { recursive: true });
    for (const file of files) cpSync(join(root, folder, file), join(outDir, 'c', folder, file));
  }
}

/** The first of `names` that is an executable file on PATH (or the path itself, if absolute). */
function onPath(name: string, env: Env): string | undefined {
  const candidates =
    isAbsolute(name) || name.includes('/')
      ? [name]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}

/** The C compiler: `CC` (a command, with arguments if any), else cc, gcc or clang on PATH. */
export function findCompiler(env: Env): { readonly command: string; readonly args: readonly string[] } {
  const cc = env.CC?.trim();
  if (cc) {
    const [name, ...args] = cc.split(/\s+/) as [string, ...string[]];
    const command = onPath(name, env);
    if (command === undefined)
      throw new NativeBuildError(`no C compiler: CC=${cc} is not an executable on PATH`);
    return { command, args };
  }
  for (const name of ['cc', 'gcc', 'clang']) {
    const command = onPath(name, env);
    if (command !== undefined) return { command, args: [] };
  }
  throw new NativeBuildError('no C compiler: CC is unset and none of cc, gcc, clang is on PATH');
}

function compilerVersion(command: string, args: readonly string[], env: Env): Promise<string> {
  return new Promise((resolve) => {
    execFile(command, [...args, '--version'], { env, timeout: 30_000 }, (error, stdout) => {
      resolve(error ? 'unknown' : (stdout.split('\n')[0] ?? '').trim());
    });
  });
}

/** The user's cache for the built library: $XDG_CACHE_HOME/tensormine/native (~/.cache by default). */
export function nativeCacheDir(env: Env): string {
  let base = env.XDG_CACHE_HOME;
  if (!base || !isAbsolute(base)) {
    try {
      base = join(homedir(), '.cache');
    } catch {
      base = tmpdir();
    }
  }
  return join(base, 'tensormine', 'native');
}

export interface NativeBuildOptions {
  /** The environment (CC, PATH, XDG_CACHE_HOME); default process.env. */
  readonly env?: Env;
  /** The cache folder; default `nativeCacheDir(env)`. */
  readonly cacheDir?: string;
  /** Compile with warnings as errors (tests, CI). */
  readonly strict?: boolean;
  /**
   * Told, in one line each, when a compile starts (the library is not in the cache: seconds of
   * silence otherwise) and when it ends; nothing when the cache has it.
   */
  readonly onProgress?: (line: string) => void;
}

export interface NativeBuild {
  /** The shared library. */
  readonly path: string;
  /** The compiler's first `--version` line. */
  readonly compiler: string;
  /** True when it was already in the cache. */
  readonly cached: boolean;
}

/** Builds the library (or finds it in the cache). Throws NativeBuildError with the reason. */
export async function buildNativeLibrary(options: NativeBuildOptions = {}): Promise<NativeBuild> {
  const env = options.env ?? process.env;
  const root = nativeSourceRoot();
  if (root === undefined) throw new NativeBuildError('the C sources are not in this installation (dist/c)');
  const { command, args } = findCompiler(env);
  const version = await compilerVersion(command, args, env);
  const flags = [...NATIVE_CFLAGS, ...(options.strict ? NATIVE_STRICT_CFLAGS : [])];
  const sources: string[] = [];
  const key = createHash('sha256');
  key.update(
    JSON.stringify({ command, args, version, flags, arch: process.arch, platform: process.platform }),
  );
  for (const [folder, files] of Object.entries(NATIVE_SOURCES)) {
    for (const file of files) {
      const path = join(root, folder, file);
      key.update(`\n${folder}/${file}\n`).update(readFileSync(path));
      if (file.endsWith('.c')) sources.push(path);
    }
  }
  const dir = join(options.cacheDir ?? nativeCacheDir(env), key.digest('hex').slice(0, 24));
  const path = join(dir, LIBRARY);
  if (existsSync(path)) return { path, compiler: version, cached: true };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new NativeBuildError(
      `cannot create the kernel cache ${dir} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const argv = [
    ...args,
    ...flags,
    '-I',
    join(root, 'core'),
    '-I',
    join(root, 'native'),
    '-o',
    tmp,
    ...sources,
  ];
  options.onProgress?.(
    `kernel: building the native kernels with ${version} into ${dir} (first use of this version: a few seconds, once)`,
  );
  const started = performance.now();
  try {
    await compile(command, argv, env);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
  options.onProgress?.(
    `kernel: native kernels built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { path, compiler: version, cached: false };
}

function compile(command: string, argv: readonly string[], env: Env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: COMPILE_TIMEOUT_MS,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.once('error', (error) => reject(new NativeBuildError(`cannot run ${command} (${error.message})`)));
    child.once('close', (code, signal) => {
      if (code === 0) return resolve();
      const lines = stderr.split('\n').map((l) => l.trim());
      const first = lines.find((l) => /error/i.test(l)) ?? lines.find((l) => l !== '') ?? '';
      reject(
        new NativeBuildError(
          `${command} failed (${signal ? `signal ${signal}` : `exit ${code}`})${first ? `: ${first.slice(0, 200)}` : ''}`,
        ),
      );
    });
  });
}
