// The hub's front end: the game list with live status badges, category filters and the ads.
// Everything from the API is inserted as text or attributes (never as HTML).
(() => {
  const el = (tag, props = {}, children = []) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const child of children) node.append(child);
    return node;
  };

  const setBadge = (badge, status) => {
    badge.classList.remove('checking', 'online', 'offline');
    badge.classList.add(status.status);
    badge.textContent = status.status === 'online' ? 'online' : 'offline';
    badge.title = status.http_status === null ? 'no answer' : `HEAD answered ${status.http_status}`;
  };

  const checkStatus = async (id, badge) => {
    try {
      const response = await fetch(`/api/status/${encodeURIComponent(id)}`);
      if (!response.ok) throw new Error(String(response.status));
      const status = await response.json();
      setBadge(badge, status);
      return status.status;
    } catch {
      setBadge(badge, { status: 'offline', http_status: null });
      return 'offline';
    }
  };

  const renderGames = async () => {
    const list = document.getElementById('games');
    const filters = document.getElementById('filters');
    const summary = document.getElementById('summary');
    const { games } = await (await fetch('/api/games')).json();
    list.replaceChildren();
    if (games.length === 0) list.append(el('li', { class: 'empty', text: 'No games yet.' }));
    const cards = games.map((game) => {
      const badge = el('span', { class: 'badge checking', 'data-status-for': game.id, text: 'checking…' });
      const card = el('li', { class: 'game', 'data-game-id': game.id, 'data-category': game.category }, [
        el('img', { src: game.icon, alt: '', loading: 'lazy', width: '56', height: '56' }),
        el('h2', {}, [el('a', { href: `/games/${encodeURIComponent(game.id)}`, text: game.name })]),
        el('span', { class: 'category', text: game.category }),
        el('div', { class: 'row' }, [
          badge,
          el('a', { class: 'play', href: game.url, rel: 'noopener', text: 'Play' }),
        ]),
      ]);
      list.append(card);
      return { game, badge, card };
    });
    const categories = [...new Set(games.map((g) => g.category))].sort();
    const buttons = ['all', ...categories].map((category) => {
      const button = el('button', {
        type: 'button',
        'aria-pressed': String(category === 'all'),
        text: category,
      });
      button.addEventListener('click', () => {
        for (const b of buttons) b.setAttribute('aria-pressed', String(b === button));
        for (const { game, card } of cards) card.hidden = category !== 'all' && game.category !== category;
      });
      return button;
    });
    if (categories.length > 1) filters.replaceChildren(...buttons);
    const results = await Promise.all(cards.map(({ game, badge }) => checkStatus(game.id, badge)));
    const online = results.filter((s) => s === 'online').length;
    summary.textContent = `${online} of ${games.length} online`;
    document.body.dataset.statusReady = 'true';
  };

  const showAd = (ad) => {
    const link = (child) =>
      el('a', { class: 'ad', href: ad.click_url, rel: 'noopener sponsored', target: '_blank' }, [child]);
    if (ad.type === 'popup') {
      const close = el('button', { class: 'close', type: 'button', 'aria-label': 'Close', text: '×' });
      const overlay = el('div', { class: 'popup', role: 'dialog', 'data-ad-id': ad.id }, [
        el('div', { class: 'box' }, [close, link(el('img', { src: ad.image_url, alt: 'Sponsored' }))]),
      ]);
      close.addEventListener('click', () => overlay.remove());
      document.body.append(overlay);
      return;
    }
    const slot =
      document.querySelector(`.ads[data-position="${CSS.escape(ad.position)}"]`) ??
      document.querySelector('.ads[data-position="sidebar"]');
    if (!slot) return;
    const content =
      ad.type === 'iframe'
        ? el('iframe', {
            src: ad.image_url,
            title: 'Sponsored',
            sandbox: 'allow-scripts allow-popups',
            loading: 'lazy',
          })
        : el('img', { src: ad.image_url, alt: 'Sponsored' });
    const node = link(content);
    node.dataset.adId = ad.id;
    slot.append(node);
  };

  const renderAds = async () => {
    const { ads } = await (await fetch('/api/ads')).json();
    for (const ad of ads) setTimeout(() => showAd(ad), ad.delay * 1000);
  };

  const pageBadges = () => {
    for (const badge of document.querySelectorAll('[data-status-for]')) {
      void checkStatus(badge.dataset.statusFor, badge);
    }
  };

  if (document.getElementById('games')) {
    renderGames().catch(() => {
      document
        .getElementById('games')
        .replaceChildren(el('li', { class: 'empty', text: 'The game list could not be loaded.' }));
    });
    renderAds().catch(() => {});
  } else {
    pageBadges();
  }
})();
