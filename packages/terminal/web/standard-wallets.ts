import { SolanaSignMessage, type SolanaSignMessageFeature } from '@solana/wallet-standard-features';
import { getWallets } from '@wallet-standard/app';
import type { Wallet, WalletAccount } from '@wallet-standard/base';
import { StandardConnect, type StandardConnectFeature } from '@wallet-standard/features';
import { sameBytes, toWallet } from './bytes.js';
import type { PageWallet } from './page-wallet.js';

/**
 * The browser's wallets through the Wallet Standard (Phantom, Solflare, Backpack and any other
 * that registers itself): the ones that can connect and sign messages (`solana:signMessage`,
 * ed25519 over the bytes given). A Solana address is the base58 of the same 32-byte ed25519 key
 * the protocol uses, so such a wallet proves itself and signs payments here as it is.
 */

type SigningWallet = Wallet & { features: StandardConnectFeature & SolanaSignMessageFeature };

function canSign(wallet: Wallet): wallet is SigningWallet {
  return StandardConnect in wallet.features && SolanaSignMessage in wallet.features;
}

/** The wallets that can sign messages, now and whenever one registers or goes away. */
export function watchWallets(
  onChange: (wallets: readonly SigningWallet[]) => void,
): readonly SigningWallet[] {
  const registry = getWallets();
  const current = () => registry.get().filter(canSign);
  registry.on('register', () => onChange(current()));
  registry.on('unregister', () => onChange(current()));
  return current();
}

export type { SigningWallet };

/**
 * Connects to `wallet` (asking the user unless `silent`) and takes its first account that signs
 * messages with a 32-byte key.
 */
export async function connectStandard(wallet: SigningWallet, silent = false): Promise<PageWallet> {
  const { accounts } = await wallet.features[StandardConnect].connect(silent ? { silent: true } : undefined);
  const account = accounts.find(
    (a: WalletAccount) => a.publicKey.length === 32 && a.features.includes(SolanaSignMessage),
  );
  if (!account) throw new Error(`${wallet.name} gave no account that can sign messages`);
  const publicKey = Uint8Array.from(account.publicKey);
  const feature = wallet.features[SolanaSignMessage];
  return {
    kind: 'standard',
    name: wallet.name,
    icon: wallet.icon,
    address: toWallet(publicKey),
    publicKey,
    async signMessage(message) {
      const [output] = await feature.signMessage({ account, message });
      if (!output) throw new Error(`${wallet.name} returned no signature`);
      // A wallet may change a message before signing it: such a signature is of other bytes.
      if (!sameBytes(Uint8Array.from(output.signedMessage), message)) {
        throw new Error(`${wallet.name} signed a changed message, which the validator cannot check`);
      }
      if (output.signatureType !== undefined && output.signatureType !== 'ed25519') {
        throw new Error(`${wallet.name} signed with ${output.signatureType}, not ed25519`);
      }
      return Uint8Array.from(output.signature);
    },
  };
}
