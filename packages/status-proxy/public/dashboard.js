// The status proxy's dashboard: plain browser JavaScript, no build step. Data: GET /api/dashboard
// (status, peers), GET /api/dashboard/blocks (every block, in columns), then live from the
// event stream GET /api/hexchain/events (EventSource, resumed from the columns' last event id).

(() => {
  const SQRT3 = Math.sqrt(3);
  const NEIGHBOURS = [
    [1, 0],
    [1, -1],
    [0, -1],
    [-1, 0],
    [-1, 1],
    [0, 1],
  ];
  const BUCKETS = 32;
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------
  const state = {
    cells: new Map(), // "q,r" -> { q, r, depth, height, miner, timestamp, difficulty }
    frontier: new Set(), // "q,r" of free cells next to a block
    miners: [],
    depthCounts: new Map(), // depth -> blocks (the genesis block included)
    maxDepth: 0,
    byHeight: [], // cells in height order (charts)
    status: null,
    colourBy: 'depth',
    lastEventId: null,
  };
  const key = (q, r) => `${q},${r}`;

  function addCell(cell) {
    const k = key(cell.q, cell.r);
    if (state.cells.has(k)) return false;
    state.cells.set(k, cell);
    state.frontier.delete(k);
    for (const [dq, dr] of NEIGHBOURS) {
      const n = key(cell.q + dq, cell.r + dr);
      if (!state.cells.has(n)) state.frontier.add(n);
    }
    state.depthCounts.set(cell.depth, (state.depthCounts.get(cell.depth) || 0) + 1);
    if (cell.depth > state.maxDepth) state.maxDepth = cell.depth;
    let at = state.byHeight.length;
    while (at > 0 && state.byHeight[at - 1].height > cell.height) at--;
    state.byHeight.splice(at, 0, cell);
    return true;
  }

  function resetCells() {
    state.cells.clear();
    state.frontier.clear();
    state.depthCounts = new Map();
    state.maxDepth = 0;
    state.byHeight = [];
    addCell({ q: 0, r: 0, depth: 0, height: 0, miner: -1, timestamp: 0, difficulty: 0, genesis: true });
  }

  // ---------------------------------------------------------------------------------------
  // Lattice canvas: cube coordinates, pointy-top hexagons, one cached Path2D per colour
  // bucket, so pan and zoom only change the transform.
  // ---------------------------------------------------------------------------------------
  const canvas = $('lattice');
  const ctx = canvas.getContext('2d');
  const wrap = $('lattice-wrap');
  const tooltip = $('tooltip');
  const view = { x: 0, y: 0, scale: 12, fitted: false };
  let paths = null; // { buckets: Path2D[], genesis: Path2D, frontier: Path2D, mapping }
  let hovered = null;
  let selected = null;
  let frame = 0;

  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const center = (q, r) => [SQRT3 * (q + r / 2), 1.5 * r];

  function hexPath(path, q, r, size = 0.96) {
    const [cx, cy] = center(q, r);
    for (let i = 0; i < 6; i++) {
      const a = (Math.PI / 180) * (60 * i - 30);
      const x = cx + size * Math.cos(a);
      const y = cy + size * Math.sin(a);
      if (i === 0) path.moveTo(x, y);
      else path.lineTo(x, y);
    }
    path.closePath();
  }

  function bucketOf(cell) {
    if (state.colourBy === 'miner') return ((cell.miner % BUCKETS) + BUCKETS) % BUCKETS;
    return Math.min(BUCKETS - 1, Math.floor((cell.depth * BUCKETS) / (state.maxDepth + 1)));
  }

  function bucketColour(i) {
    if (state.colourBy === 'miner') return `hsl(${Math.round((i * 137.508) % 360)} 65% 55%)`;
    const t = i / (BUCKETS - 1);
    // Deep blue (shallow) through teal and yellow to red (deep).
    const hue = 220 - 220 * t;
    return `hsl(${hue.toFixed(0)} 75% ${(48 + 6 * Math.sin(t * Math.PI)).toFixed(0)}%)`;
  }

  function rebuildPaths() {
    const buckets = Array.from({ length: BUCKETS }, () => new Path2D());
    const genesis = new Path2D();
    for (const cell of state.cells.values()) {
      if (cell.genesis) hexPath(genesis, 0, 0);
      else hexPath(buckets[bucketOf(cell)], cell.q, cell.r);
    }
    paths = { buckets, genesis, frontier: null, mapping: `${state.colourBy}:${state.maxDepth}` };
    invalidate();
  }

  function frontierPath() {
    if (paths.frontier === null) {
      const p = new Path2D();
      for (const k of state.frontier) {
        const [q, r] = k.split(',').map(Number);
        hexPath(p, q, r, 0.9);
      }
      paths.frontier = p;
    }
    return paths.frontier;
  }

  /** Appends a new cell to the cached paths (or rebuilds them when the colour scale moved). */
  function pathsAdd(cell) {
    if (paths === null || paths.mapping !== `${state.colourBy}:${state.maxDepth}`) return rebuildPaths();
    hexPath(paths.buckets[bucketOf(cell)], cell.q, cell.r);
    paths.frontier = null;
    invalidate();
  }

  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const { width, height } = wrap.getBoundingClientRect();
    canvas.width = Math.max(1, Math.round(width * dpr));
    canvas.height = Math.max(1, Math.round(height * dpr));
    invalidate();
    if (!view.fitted) fit();
    draw();
  }

  function fit() {
    let minX = Infinity,
      maxX = -Infinity,
      minY = Infinity,
      maxY = -Infinity;
    for (const cell of state.cells.values()) {
      const [x, y] = center(cell.q, cell.r);
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
    const w = canvas.width / (window.devicePixelRatio || 1);
    const h = canvas.height / (window.devicePixelRatio || 1);
    // Room for the frontier ring around the blocks.
    const spanX = maxX - minX + 4 * SQRT3;
    const spanY = maxY - minY + 6;
    view.scale = Math.max(0.2, Math.min(40, Math.min(w / spanX, h / spanY)));
    view.x = -(minX + maxX) / 2;
    view.y = -(minY + maxY) / 2;
    view.fitted = true;
  }

  // Timings the benchmark reads (ms since navigation start; ms per full render and per frame).
  const metrics = { snapshotMs: null, firstRenderMs: null, renderMs: [], frameMs: [] };
  const keep = (list, value) => {
    list.push(value);
    if (list.length > 100) list.shift();
  };

  // The cells are rendered into an offscreen layer; a frame composites the layer and the
  // highlights. While the user pans or zooms the layer is only moved and scaled (a frame costs
  // one image copy, whatever the number of cells), and rendered again sharp once the gesture
  // settles.
  const layer = document.createElement('canvas');
  const layerCtx = layer.getContext('2d');
  let layerView = null; // the view the layer was rendered at; null: must render
  let interacting = false;
  let settleTimer = 0;

  function invalidate() {
    layerView = null;
  }

  function interact() {
    interacting = true;
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      interacting = false;
      schedule();
    }, 150);
  }

  function renderLayer() {
    const started = performance.now();
    if (paths === null) rebuildPaths();
    if (layer.width !== canvas.width || layer.height !== canvas.height) {
      layer.width = canvas.width;
      layer.height = canvas.height;
    }
    const dpr = window.devicePixelRatio || 1;
    const c = layerCtx;
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.clearRect(0, 0, layer.width, layer.height);
    const s = view.scale * dpr;
    c.setTransform(s, 0, 0, s, layer.width / 2 + view.x * s, layer.height / 2 + view.y * s);
    if (view.scale >= 4) {
      c.strokeStyle = css('--frontier');
      c.lineWidth = 1 / view.scale;
      c.stroke(frontierPath());
    }
    for (let i = 0; i < BUCKETS; i++) {
      c.fillStyle = bucketColour(i);
      c.fill(paths.buckets[i]);
    }
    c.fillStyle = css('--genesis');
    c.fill(paths.genesis);
    layerView = { x: view.x, y: view.y, scale: view.scale };
    keep(metrics.renderMs, performance.now() - started);
  }

  function draw() {
    frame = 0;
    const started = performance.now();
    const moved =
      layerView !== null &&
      (layerView.x !== view.x || layerView.y !== view.y || layerView.scale !== view.scale);
    if (layerView === null || (moved && !interacting)) renderLayer();
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    // The layer, moved from the view it was rendered at to the current one.
    const k = view.scale / layerView.scale;
    const s = view.scale * dpr;
    const cx = canvas.width / 2;
    const cy = canvas.height / 2;
    ctx.setTransform(
      k,
      0,
      0,
      k,
      cx * (1 - k) + (view.x - layerView.x) * s,
      cy * (1 - k) + (view.y - layerView.y) * s,
    );
    ctx.imageSmoothingEnabled = k !== 1;
    ctx.drawImage(layer, 0, 0);
    ctx.setTransform(s, 0, 0, s, cx + view.x * s, cy + view.y * s);
    for (const [cell, colour, width] of [
      [selected, css('--accent'), 3],
      [hovered, css('--hover'), 2],
    ]) {
      if (!cell) continue;
      const p = new Path2D();
      hexPath(p, cell.q, cell.r);
      ctx.strokeStyle = colour;
      ctx.lineWidth = width / view.scale;
      ctx.stroke(p);
    }
    canvas.dataset.cells = String(state.cells.size);
    keep(metrics.frameMs, performance.now() - started);
  }

  function schedule() {
    if (frame === 0) frame = requestAnimationFrame(draw);
  }

  /** The cell under a point of the canvas (CSS pixels), by cube rounding. */
  function cellAt(px, py) {
    const rect = canvas.getBoundingClientRect();
    const x = (px - rect.width / 2) / view.scale - view.x;
    const y = (py - rect.height / 2) / view.scale - view.y;
    const qf = (SQRT3 / 3) * x - y / 3;
    const rf = (2 / 3) * y;
    const sf = -qf - rf;
    let q = Math.round(qf),
      r = Math.round(rf),
      s = Math.round(sf);
    const dq = Math.abs(q - qf),
      dr = Math.abs(r - rf),
      ds = Math.abs(s - sf);
    if (dq > dr && dq > ds) q = -r - s;
    else if (dr > ds) r = -q - s;
    return state.cells.get(key(q, r)) || null;
  }

  // Pointer: drag to pan, wheel or pinch to zoom, hover for a tooltip, click for the block.
  const pointers = new Map();
  let drag = null;
  let moved = false;
  canvas.addEventListener('pointerdown', (e) => {
    canvas.setPointerCapture(e.pointerId);
    pointers.set(e.pointerId, { x: e.offsetX, y: e.offsetY });
    drag = { x: e.offsetX, y: e.offsetY, vx: view.x, vy: view.y, scale: view.scale, dist: pinchDistance() };
    moved = false;
    canvas.classList.add('dragging');
  });
  canvas.addEventListener('pointermove', (e) => {
    if (pointers.has(e.pointerId)) pointers.set(e.pointerId, { x: e.offsetX, y: e.offsetY });
    if (drag !== null && pointers.size > 0) {
      if (pointers.size >= 2 && drag.dist > 0) {
        zoomAt(e.offsetX, e.offsetY, (drag.scale * pinchDistance()) / drag.dist / view.scale);
      } else {
        const dx = e.offsetX - drag.x;
        const dy = e.offsetY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
        view.x = drag.vx + dx / view.scale;
        view.y = drag.vy + dy / view.scale;
      }
      interact();
      schedule();
      return;
    }
    const cell = cellAt(e.offsetX, e.offsetY);
    if (cell !== hovered) {
      hovered = cell;
      schedule();
    }
    if (cell) {
      tooltip.hidden = false;
      tooltip.textContent = describe(cell);
      const left = Math.min(e.offsetX + 12, wrap.clientWidth - tooltip.offsetWidth - 4);
      tooltip.style.left = `${Math.max(4, left)}px`;
      tooltip.style.top = `${e.offsetY + 12}px`;
    } else tooltip.hidden = true;
  });
  const endDrag = (e) => {
    pointers.delete(e.pointerId);
    if (pointers.size === 0) {
      if (drag !== null && !moved && e.type === 'pointerup') select(cellAt(e.offsetX, e.offsetY));
      drag = null;
      canvas.classList.remove('dragging');
    } else drag = { ...drag, dist: pinchDistance(), scale: view.scale };
  };
  canvas.addEventListener('pointerup', endDrag);
  canvas.addEventListener('pointercancel', endDrag);
  canvas.addEventListener('pointerleave', () => {
    tooltip.hidden = true;
    if (hovered) {
      hovered = null;
      schedule();
    }
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      interact();
      zoomAt(e.offsetX, e.offsetY, Math.exp(-e.deltaY * 0.0015));
    },
    { passive: false },
  );

  function pinchDistance() {
    const ps = [...pointers.values()];
    return ps.length < 2 ? 0 : Math.hypot(ps[0].x - ps[1].x, ps[0].y - ps[1].y);
  }

  function zoomAt(px, py, factor) {
    const rect = canvas.getBoundingClientRect();
    const next = Math.max(0.2, Math.min(80, view.scale * factor));
    const wx = (px - rect.width / 2) / view.scale - view.x;
    const wy = (py - rect.height / 2) / view.scale - view.y;
    view.scale = next;
    view.x = (px - rect.width / 2) / next - wx;
    view.y = (py - rect.height / 2) / next - wy;
    schedule();
  }

  function describe(cell) {
    const coord = `(${cell.q}, ${cell.r}, ${-cell.q - cell.r})`;
    if (cell.genesis) return `${coord} genesis block, depth 0`;
    const miner = state.miners[cell.miner] || '';
    return `${coord} depth ${cell.depth} · height ${cell.height} · miner ${miner.slice(0, 10)}… · ${new Date(cell.timestamp * 1000).toLocaleTimeString()}`;
  }

  async function select(cell) {
    selected = cell;
    schedule();
    const box = $('block-detail');
    if (!cell) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    if (cell.genesis) {
      box.innerHTML = '';
      box.append(
        detailList([
          ['coordinate', '(0, 0, 0)'],
          ['block', 'genesis (no header)'],
          ['hash', state.status ? state.status.genesis_hash : ''],
        ]),
      );
      return;
    }
    box.textContent = 'loading…';
    try {
      const res = await fetch(`/api/hexchain/lattice/${cell.q}/${cell.r}/${-cell.q - cell.r}`);
      const block = await res.json();
      if (!res.ok) throw new Error(block.message || res.statusText);
      box.innerHTML = '';
      box.append(
        detailList([
          ['coordinate', `(${block.coord.q}, ${block.coord.r}, ${block.coord.s})`],
          ['depth', String(block.depth)],
          ['height', String(cell.height)],
          ['block hash', block.block_hash],
          ['pow hash', block.pow_hash],
          ['miner', block.miner_pubkey],
          ['nonce', String(block.nonce)],
          ['difficulty', String(block.difficulty)],
          ['parents', block.parents.map((p) => `(${p.q}, ${p.r}, ${p.s})`).join(' ')],
          ['accepted', new Date(block.timestamp * 1000).toLocaleString()],
        ]),
      );
    } catch (error) {
      box.textContent = `could not load the block: ${error.message}`;
    }
  }

  function detailList(rows) {
    const dl = document.createElement('dl');
    for (const [k, v] of rows) {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = v;
      dl.append(dt, dd);
    }
    return dl;
  }

  function legend() {
    const box = $('legend');
    box.innerHTML = '';
    if (state.colourBy === 'depth') {
      const bar = document.createElement('span');
      bar.className = 'bar';
      const stops = Array.from({ length: 8 }, (_, i) => bucketColour(Math.round((i * (BUCKETS - 1)) / 7)));
      bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
      box.append('depth 1', bar, `depth ${state.maxDepth}`);
    } else {
      box.append(
        `${state.miners.length} miner${state.miners.length === 1 ? '' : 's'}, one colour each (colours repeat after ${BUCKETS})`,
      );
    }
  }

  $('colour-by').addEventListener('change', (e) => {
    state.colourBy = e.target.value;
    rebuildPaths();
    legend();
    schedule();
  });
  $('fit').addEventListener('click', () => {
    fit();
    schedule();
  });
  new ResizeObserver(() => resize()).observe(wrap);

  // The panels beside the lattice (charts, figures, peers, recent blocks): panels.js.
  const panels = window.tensorminePanels(state);
  const histogramData = panels.histogramData;

  function renderAll() {
    panels.renderFigures();
    panels.renderHistogram();
    panels.renderTimeline();
    panels.renderRecent();
    legend();
  }

  // ---------------------------------------------------------------------------------------
  // Data: snapshot, then the event stream
  // ---------------------------------------------------------------------------------------
  function setConnection(live, text) {
    $('conn-dot').className = `dot ${live ? 'live' : 'down'}`;
    $('conn-text').textContent = text;
  }

  async function getJson(url) {
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    const body = await res.json();
    if (!res.ok) throw new Error(body.message || `${url}: HTTP ${res.status}`);
    return body;
  }

  async function refreshSummary() {
    try {
      const summary = await getJson('/api/dashboard');
      state.status = summary.lattice;
      panels.renderPeers(summary.peers, summary.validator.node_id);
      panels.renderFigures();
    } catch (error) {
      setConnection(false, error.message);
    }
  }

  async function loadSnapshot() {
    const columns = await getJson('/api/dashboard/blocks');
    if (metrics.snapshotMs === null) metrics.snapshotMs = performance.now();
    resetCells();
    state.miners = columns.miners;
    for (let i = 0; i < columns.height.length; i++) {
      addCell({
        q: columns.q[i],
        r: columns.r[i],
        depth: columns.depth[i],
        height: columns.height[i],
        miner: columns.miner[i],
        timestamp: columns.timestamp[i],
        difficulty: columns.difficulty[i],
      });
    }
    state.lastEventId = columns.last_event_id;
    rebuildPaths();
    view.fitted = false;
    resize();
    // The frame after the draw: the cells are on screen.
    if (metrics.firstRenderMs === null) {
      requestAnimationFrame(() => {
        metrics.firstRenderMs ??= performance.now();
      });
    }
    renderAll();
  }

  let source = null;
  function follow() {
    if (source) source.close();
    const url = state.lastEventId
      ? `/api/hexchain/events?last_event_id=${encodeURIComponent(state.lastEventId)}`
      : '/api/hexchain/events';
    source = new EventSource(url);
    source.onopen = () => setConnection(true, 'live');
    source.onerror = () => setConnection(false, 'reconnecting…');
    source.addEventListener('block', (e) => {
      const data = JSON.parse(e.data);
      const b = data.block;
      let miner = state.miners.indexOf(b.miner_pubkey);
      if (miner < 0) {
        miner = state.miners.length;
        state.miners.push(b.miner_pubkey);
      }
      const cell = {
        q: b.coord.q,
        r: b.coord.r,
        depth: b.depth,
        height: data.height,
        miner,
        timestamp: b.timestamp,
        difficulty: b.difficulty,
      };
      if (addCell(cell)) pathsAdd(cell);
      if (state.status) {
        state.status = {
          ...state.status,
          occupied: data.occupied,
          frontier_size: data.frontier_size,
          max_depth: data.max_depth,
          blocks_until_retarget: data.blocks_until_retarget,
        };
      }
      schedule();
      renderAll();
    });
    const difficulty = (e) => {
      const data = JSON.parse(e.data);
      if (state.status) state.status = { ...state.status, difficulty: data.to };
      panels.renderFigures();
    };
    source.addEventListener('retarget', difficulty);
    source.addEventListener('difficulty', difficulty);
    source.addEventListener('reset', () => {
      // Events were missed: load everything again, then follow on from there.
      void start();
    });
  }

  async function start() {
    try {
      await Promise.all([loadSnapshot(), refreshSummary()]);
      follow();
    } catch (error) {
      setConnection(false, `${error.message}; retrying`);
      setTimeout(start, 3000);
    }
  }

  // Exposed for tests and the console: what the page shows.
  window.tensormineDashboard = {
    cells: () => state.cells.size,
    histogram: histogramData,
    frontier: () => state.frontier.size,
    hasCell: (q, r) => state.cells.has(key(q, r)),
    metrics: () => metrics,
    /** One zoom step as the wheel does it (the layer is scaled, not rendered again). */
    zoom: (factor) => {
      const rect = canvas.getBoundingClientRect();
      interact();
      zoomAt(rect.width / 2, rect.height / 2, factor);
      draw();
    },
    /** Ends the gesture now: the lattice is rendered again at the current view. */
    settle: () => {
      clearTimeout(settleTimer);
      interacting = false;
      draw();
    },
    /** Where a cell's centre is on the page (CSS pixels), to point at it. */
    pointOf: (q, r) => {
      const rect = canvas.getBoundingClientRect();
      const [x, y] = center(q, r);
      return {
        x: rect.left + rect.width / 2 + (x + view.x) * view.scale,
        y: rect.top + rect.height / 2 + (y + view.y) * view.scale,
      };
    },
  };

  resetCells();
  resize();
  void start();
  setInterval(refreshSummary, 10_000);
})();
