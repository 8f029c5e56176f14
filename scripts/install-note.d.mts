/** Types of install-note.mjs (the root's postinstall), for its test. */
export function npmNodeVersion(env?: Readonly<Record<string, string | undefined>>): string | undefined;
export function installNote(version: string | undefined, floor: string, pinned: string): string | undefined;
