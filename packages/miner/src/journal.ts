import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MinerError } from './errors.js';
import type { FoundResult } from './found.js';

/**
 * The durable journal of results not yet settled. The Miner appends every result before (in
 * parallel with) its submission and removes it once the validator accepted or definitively
 * rejected it; a result that could not be delivered stays and is resubmitted when the
 * validator is back, or dropped once its challenge has expired. So nothing found is lost to
 * a network blip, a validator restart or a miner restart (the journal is read at start).
 *
 * The file is JSON Lines, one entry per line:
 *   {"v":1,"journaledAtMs":1795339684623,"found":{...FoundResult...}}
 * An append is written and fsynced before it is reported done. A removal rewrites the file
 * with the remaining entries (compaction) into a temporary file that is fsynced and renamed
 * over the journal, then the directory is fsynced: at every instant the file on disk holds
 * either the old or the new set of entries. A torn last line (a crash during an append) or
 * any other unreadable line is repaired when the journal is opened: the readable entries are
 * rewritten (the same atomic compaction) and the unreadable lines are appended to
 * `<journal>.damaged` for inspection, so a later append never lands on a torn line.
 * `skippedLines` and `damagedPath` report it. Without a path the journal lives in memory only.
 */
export interface JournalEntry {
  readonly found: FoundResult;
  readonly journaledAtMs: number;
}

export interface JournalOptions {
  /** The JSONL file; undefined keeps the journal in memory (lost on exit). */
  readonly path?: string;
  /** fsync appends and compactions (default true). */
  readonly fsync?: boolean;
  readonly now?: () => number;
}

export class Journal {
  readonly path: string | undefined;
  /** Lines of the file that could not be read (a torn last line, garbage). */
  skippedLines = 0;
  /** Where the unreadable lines were set aside when the journal was repaired at open. */
  damagedPath: string | undefined;
  private readonly entriesById = new Map<string, JournalEntry>();
  /** Ids whose line is in the file (a compaction rewrites only these; later appends add theirs). */
  private readonly onDisk = new Set<string>();
  private readonly fsync: boolean;
  private readonly now: () => number;
  /** Operations on the file run one at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The file's directory entry was made durable (after the first append). */
  private directorySynced = false;

  private constructor(options: JournalOptions) {
    this.path = options.path;
    this.fsync = options.fsync ?? true;
    this.now = options.now ?? Date.now;
  }

  /**
   * Opens a journal, reading the entries already in its file (creating nothing until the
   * first append).
   * @throws MinerError `journal_io` when the file exists but cannot be read.
   */
  static async open(options: JournalOptions | string = {}): Promise<Journal> {
    const journal = new Journal(typeof options === 'string' ? { path: options } : options);
    await journal.load();
    return journal;
  }

  /** The pending entries, oldest first. */
  entries(): JournalEntry[] {
    return [...this.entriesById.values()];
  }

  get size(): number {
    return this.entriesById.size;
  }

  has(id: string): boolean {
    return this.entriesById.has(id);
  }

  /** Appends a result (durably, when the journal has a file); a result already in it is kept once. */
  add(found: FoundResult): Promise<void> {
    if (this.entriesById.has(found.id)) return this.queue.then(() => undefined);
    const entry: JournalEntry = { found, journaledAtMs: this.now() };
    this.entriesById.set(found.id, entry);
    return this.enqueue(async () => {
      if (this.path === undefined) return;
      await this.write(this.path, 'a', `${JSON.stringify({ v: 1, ...entry })}\n`);
      this.onDisk.add(found.id);
      if (!this.directorySynced) {
        await this.syncDirectory();
        this.directorySynced = true;
      }
    });
  }

  /** Removes a settled result and compacts the file. */
  remove(id: string): Promise<void> {
    if (!this.entriesById.delete(id)) return this.queue.then(() => undefined);
    return this.enqueue(() => this.compact());
  }

  /** Resolves when every operation queued so far is on disk. */
  flush(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(op, op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async load(): Promise<void> {
    if (this.path === undefined) return;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new MinerError(
        'journal_io',
        `journal ${this.path}: cannot read it: ${(error as Error).message}`,
        {},
        { cause: error },
      );
    }
    const damaged: string[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const entry = parseEntry(line);
      if (entry === undefined) {
        this.skippedLines++;
        damaged.push(line);
        continue;
      }
      if (!this.entriesById.has(entry.found.id)) this.entriesById.set(entry.found.id, entry);
      this.onDisk.add(entry.found.id);
    }
    // A torn last line (no final newline) or unreadable lines: rewrite the readable entries, so
    // the next append starts on a line of its own, and keep what could not be read.
    if (damaged.length > 0 || (text.length > 0 && !text.endsWith('\n'))) {
      if (damaged.length > 0) {
        this.damagedPath = `${this.path}.damaged`;
        await this.write(this.damagedPath, 'a', `${damaged.join('\n')}\n`);
      }
      await this.compact();
    }
  }

  private async compact(): Promise<void> {
    if (this.path === undefined) return;
    const tmp = join(dirname(this.path), `.${basename(this.path)}.tmp`);
    const kept = this.entries().filter((e) => this.onDisk.has(e.found.id));
    const body = kept.map((e) => `${JSON.stringify({ v: 1, ...e })}\n`).join('');
    await this.write(tmp, 'w', body);
    await rename(tmp, this.path);
    this.onDisk.clear();
    for (const e of kept) this.onDisk.add(e.found.id);
    await this.syncDirectory();
  }

  private async write(path: string, flags: 'a' | 'w', text: string): Promise<void> {
    try {
      await mkdir(dirname(path), { recursive: true });
      const file = await open(path, flags, 0o600);
      try {
        await file.writeFile(text, 'utf8');
        if (this.fsync) await file.sync();
      } finally {
        await file.close();
      }
    } catch (error) {
      throw new MinerError(
        'journal_io',
        `journal ${path}: cannot write it: ${(error as Error).message}`,
        {},
        { cause: error },
      );
    }
  }

  private async syncDirectory(): Promise<void> {
    if (!this.fsync || this.path === undefined) return;
    try {
      const dir = await open(dirname(this.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch {
      // Some platforms cannot fsync a directory; the rename is still atomic.
    }
  }
}

function parseEntry(line: string): JournalEntry | undefined {
  try {
    const value = JSON.parse(line) as { v?: unknown; journaledAtMs?: unknown; found?: Partial<FoundResult> };
    const f = value.found;
    if (
      value.v !== 1 ||
      typeof value.journaledAtMs !== 'number' ||
      typeof f !== 'object' ||
      f === null ||
      typeof f.id !== 'string' ||
      typeof f.challengeId !== 'string' ||
      typeof f.nonce !== 'number' ||
      typeof f.expiresAtMs !== 'number' ||
      (f.kind !== 'hexchain' && f.kind !== 'tensor')
    ) {
      return undefined;
    }
    return { found: f as FoundResult, journaledAtMs: value.journaledAtMs };
  } catch {
    return undefined;
  }
}
