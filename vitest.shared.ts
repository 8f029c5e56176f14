import { defineProject, type UserWorkspaceConfig } from 'vitest/config';

/**
 * The vitest project config of a workspace package. Workspace dependencies resolve to their
 * TypeScript sources (`@tensormine/source` export condition), so tests need no build.
 */
export function packageProject(name: string, test: UserWorkspaceConfig['test'] = {}): UserWorkspaceConfig {
  return defineProject({
    resolve: { conditions: ['@tensormine/source'] },
    ssr: { resolve: { conditions: ['@tensormine/source'] } },
    test: { name, include: ['src/**/*.test.ts', 'test/**/*.test.ts'], ...test },
  });
}
