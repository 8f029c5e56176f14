// The miner's page: plain browser JavaScript, no build step. Reads GET /api/system/info and
// GET /api/config every 2 s (open on the loopback); changes (POST /api/config, /api/pause,
// /api/resume, /api/system/restart) send the control token typed here, kept for this tab only.
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { info: null, config: null, error: null };

  function rate(h) {
    if (h === null || h === undefined) return 'n/a';
    const units = ['H/s', 'kH/s', 'MH/s', 'GH/s', 'TH/s'];
    let i = 0;
    while (h >= 1000 && i < units.length - 1) {
      h /= 1000;
      i++;
    }
    return `${h.toFixed(h < 10 ? 2 : 1)} ${units[i]}`;
  }
  const count = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'));
  const big = (n) => (n >= 1e6 ? n.toExponential(2) : count(Math.round(n)));
  function duration(s) {
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
  }
  const ago = (iso) =>
    iso === null ? '–' : `${duration(Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000)))} ago`;
  // A board's state, with why its self-test did not pass and when it is tried again.
  function boardState(b) {
    const t = b.selfTest;
    if (!t) return b.state;
    if (t.retryAt === null) return `${b.state}: ${t.reason}`;
    const at = Date.parse(t.retryAt);
    const when = at > Date.now() ? `retrying at ${new Date(at).toTimeString().slice(0, 8)}` : 'retrying now';
    return `${b.state}: timed out (${t.reason}), ${when}`;
  }
  function cell(row, text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.append(td);
  }

  async function getJson(path, init) {
    const res = await fetch(path, {
      ...init,
      headers: { accept: 'application/json', ...(init?.headers ?? {}) },
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.message || `${path}: HTTP ${res.status}`);
    return body;
  }

  function render() {
    const info = state.info;
    const dot = $('state-dot');
    if (state.error || !info) {
      dot.className = 'dot down';
      $('state').textContent = state.error ? `no answer: ${state.error}` : 'connecting…';
      return;
    }
    dot.className = `dot ${info.paused ? 'warn' : info.connected ? 'ok' : 'down'}`;
    $('state').textContent = info.paused ? 'paused' : info.connected ? 'mining' : 'waiting for a validator';
    $('version').textContent = info.version ? `v${info.version}` : '';
    $('validator').textContent = info.validatorUrl ?? '–';
    $('uptime').textContent = duration(info.uptimeSeconds);
    $('rate-10s').textContent = rate(info.hashesPerSecond['10s']);
    $('rate-60s').textContent = rate(info.hashesPerSecond['60s']);
    $('rate-15m').textContent = rate(info.hashesPerSecond['15m']);
    $('accepted').textContent = count(info.sharesAccepted);
    $('rejected').textContent = count(info.sharesRejected);
    $('stale').textContent = count(info.sharesStale);
    $('best').textContent = big(info.bestDiff);
    $('job').textContent = info.job ? big(info.job.difficulty) : '–';
    $('pause').textContent = info.paused ? 'Resume' : 'Pause';
    const body = $('devices');
    body.replaceChildren();
    for (const d of info.devices) {
      const row = document.createElement('tr');
      cell(row, d.id);
      cell(
        row,
        d.state,
        d.state === 'ok' ? 'good' : d.state === 'error' || d.state === 'no device' ? 'bad' : '',
      );
      cell(row, rate(d.hashesPerSecond['10s']));
      cell(row, rate(d.hashesPerSecond['60s']));
      cell(row, count(d.totalHashes));
      cell(row, count(d.sharesAccepted), 'good');
      cell(row, count(d.sharesRejected), d.sharesRejected > 0 ? 'bad' : '');
      cell(row, ago(d.lastFoundAt));
      body.append(row);
      for (const b of d.boards ?? []) {
        const r = document.createElement('tr');
        r.className = 'board';
        cell(r, `${b.id} ${b.port ?? '(unplugged)'}`);
        cell(
          r,
          boardState(b),
          b.state === 'ok' ? 'good' : b.state === 'self-test failed' || b.state === 'no device' ? 'bad' : '',
        );
        cell(r, rate(b.hashesPerSecond['10s']));
        cell(r, rate(b.hashesPerSecond['60s']));
        cell(r, count(b.totalHashes));
        cell(r, count(b.sharesAccepted), 'good');
        cell(r, `${count(b.sharesRejected)} · hw ${b.hardwareErrors} · crc ${b.crcErrors}`);
        cell(r, ago(b.lastFoundAt));
        body.append(r);
      }
    }
    $('reasons').textContent =
      info.sharesRejectedReasons.length === 0
        ? ''
        : `rejected: ${info.sharesRejectedReasons.map((r) => `${r.message} ×${r.count}`).join(', ')}`;
    const c = state.config;
    if (c) {
      const rows = [
        ['validators', `${c.validators.join(', ')}${c.local ? ' (local, in the miner)' : ''}`],
        ['mode', c.pool ? 'pool (shares)' : 'solo (blocks)'],
        [
          'cpu',
          c.cpu
            ? `${c.threads} thread${c.threads === 1 ? '' : 's'}, intensity ${c.intensity}, kernel ${c.kernel} (running ${c.kernelInUse ?? '–'})`
            : 'off',
        ],
        ['boards', c.devices.length === 0 ? 'none' : c.devices.join(', ')],
        ['protocol', c.protocol],
      ];
      const dl = $('config');
      dl.replaceChildren();
      for (const [k, v] of rows) {
        const dt = document.createElement('dt');
        dt.textContent = k;
        const dd = document.createElement('dd');
        dd.textContent = v;
        dl.append(dt, dd);
      }
      const form = $('change');
      if (!form.dataset.filled) {
        form.dataset.filled = '1';
        $('threads').value = c.threads;
        $('intensity').value = c.intensity;
        $('kernel').value = c.kernel;
      }
    }
  }

  async function refresh() {
    try {
      const [info, config] = await Promise.all([getJson('/api/system/info'), getJson('/api/config')]);
      state.info = info;
      state.config = config;
      state.error = null;
    } catch (error) {
      state.error = error.message;
    }
    render();
  }

  const token = $('token');
  token.value = sessionStorage.getItem('tensormine-miner-token') ?? '';
  token.addEventListener('change', () => sessionStorage.setItem('tensormine-miner-token', token.value));
  async function change(path, body) {
    $('message').textContent = 'working…';
    try {
      const result = await getJson(path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.value}`, 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
      $('message').textContent = result.applied
        ? `applied: ${result.applied.join(', ') || 'nothing changed'}${result.restarted === 'none' ? '' : ` (restarted the ${result.restarted === 'run' ? 'mining run' : 'workers'})`}`
        : 'done';
      $('change').dataset.filled = '';
    } catch (error) {
      $('message').textContent = error.message;
    }
    await refresh();
  }
  $('change').addEventListener('submit', (event) => {
    event.preventDefault();
    void change('/api/config', {
      threads: Number($('threads').value),
      intensity: Number($('intensity').value),
      kernel: $('kernel').value,
    });
  });
  $('pause').addEventListener('click', () => void change(state.info?.paused ? '/api/resume' : '/api/pause'));
  $('restart').addEventListener('click', () => void change('/api/system/restart'));

  // For tests and the console: what the page shows.
  window.tensormineMiner = { info: () => state.info, config: () => state.config, error: () => state.error };
  void refresh();
  setInterval(refresh, 2000);
})();
