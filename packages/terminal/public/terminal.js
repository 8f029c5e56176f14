// The terminal's reference front end: prove the wallet (sign a challenge with the wallet
// provider, window.tensormineWallet: { publicKey: base58, signMessage(bytes) -> signature bytes }),
// sign in with X, claim the welcome tokens, buy premium or no-ads with a transfer id.
(() => {
  const $ = (id) => document.getElementById(id);
  const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  let session = { account: null, wallet: null, claim_session: null, entitlements: [] };

  const api = async (method, path, body) => {
    const response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok)
      throw Object.assign(new Error(json.message ?? `HTTP ${response.status}`), { code: json.code });
    return json;
  };

  const show = (el, text, ok) => {
    el.textContent = text;
    el.className = `result ${ok ? 'ok' : 'error'}`;
  };

  const render = () => {
    $('wallet').textContent = session.wallet ?? 'not connected';
    $('account').textContent = session.account
      ? `${session.account.username ? `@${session.account.username}` : session.account.id} (${session.account.provider})`
      : 'not signed in';
    $('who').textContent = [session.account?.username, session.wallet && `${session.wallet.slice(0, 6)}…`]
      .filter(Boolean)
      .join(' · ');
    $('signin').disabled = !session.wallet;
    $('claim').disabled = !(session.wallet && session.account && session.claim_session);
    $('buy-premium').disabled = !session.wallet;
    $('buy-no-ads').disabled = !session.wallet;
    $('entitlements').textContent = session.entitlements.length
      ? session.entitlements
          .map(
            (e) =>
              `${e.product}${e.valid_until ? ` until ${new Date(e.valid_until * 1000).toISOString().slice(0, 10)}` : ''}`,
          )
          .join(', ')
      : 'none';
    document.body.dataset.ready = 'true';
  };

  const refresh = async () => {
    session = await api('GET', '/api/session');
    render();
  };

  $('connect').addEventListener('click', async () => {
    const provider = window.tensormineWallet;
    if (!provider) {
      show($('claim-result'), 'No wallet found in this browser.', false);
      return;
    }
    try {
      const challenge = await api('POST', '/api/wallet/challenge', { wallet: provider.publicKey });
      const signature = await provider.signMessage(new TextEncoder().encode(challenge.message));
      session = await api('POST', '/api/wallet/verify', {
        wallet: provider.publicKey,
        signature: toHex(signature),
      });
      render();
    } catch (error) {
      show($('claim-result'), `Wallet not connected: ${error.message}`, false);
    }
  });

  $('signin').addEventListener('click', () => {
    const query = new URLSearchParams({ wallet: session.wallet, redirect: '/' });
    window.location.assign(`/api/x-auth/authorize?${query}`);
  });

  $('claim').addEventListener('click', async () => {
    try {
      const result = await api('POST', '/api/x-auth/claim', {
        wallet: session.wallet,
        session: session.claim_session,
      });
      const sent = result.transfers.map((t) => `${t.amount} ${t.token}`).join(' and ');
      show(
        $('claim-result'),
        result.claimed ? `Sent ${sent} to your wallet.` : `Already claimed: ${sent} were sent earlier.`,
        true,
      );
    } catch (error) {
      show($('claim-result'), `${error.message}${error.code ? ` (${error.code})` : ''}`, false);
    }
  });

  const buy = (path) => async () => {
    try {
      const result = await api('POST', path, {
        wallet: session.wallet,
        currency: $('currency').value,
        transfer_id: $('transfer').value.trim(),
      });
      show($('buy-result'), `Bought ${result.product} for ${result.amount} ${result.currency}.`, true);
      await refresh();
    } catch (error) {
      show($('buy-result'), `${error.message}${error.code ? ` (${error.code})` : ''}`, false);
    }
  };
  $('buy-premium').addEventListener('click', buy('/api/crypto/premium-purchase'));
  $('buy-no-ads').addEventListener('click', buy('/api/crypto/no-ads-purchase'));

  refresh().catch(() => render());
})();
