import type { MetaRepo } from '../types.js';
import type { Scope } from './scope.js';
import { text } from './values.js';

/** Table `meta`: small key/value settings that survive a restart. */
export class SqlMetaRepo implements MetaRepo {
  constructor(private readonly scope: Scope) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.scope.read().prepare('SELECT value FROM meta WHERE key = ?').get(key);
    return row === undefined ? undefined : text(row, 'value');
  }

  async set(key: string, value: string): Promise<void> {
    await this.scope
      .write('meta.set')
      .prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }
}
