/** Hexchain rows of the protocol benchmark (filled in once the hexchain module exists). */
export function hexchainCases(): string[] {
  return [];
}
