/** A wallet the page can use: its address (base58 of its ed25519 key) and message signing. */
export interface PageWallet {
  /** `standard`: a wallet of the browser (Wallet Standard); `builtin`: the page's own. */
  readonly kind: 'standard' | 'builtin';
  /** Its name as shown (e.g. "Phantom", "Built-in wallet"). */
  readonly name: string;
  /** Its icon (a data: URI), when it has one. */
  readonly icon?: string;
  /** The wallet address: base58 of the 32-byte public key. */
  readonly address: string;
  readonly publicKey: Uint8Array;
  /** The ed25519 signature (64 bytes) of exactly these bytes. */
  signMessage(message: Uint8Array): Promise<Uint8Array>;
}
