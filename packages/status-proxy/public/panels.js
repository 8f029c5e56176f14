// The dashboard's panels beside the lattice: the depth histogram and the difficulty / block
// interval chart (uPlot), the figures, the peer topology and the recent blocks. Plain browser
// JavaScript (no build step); dashboard.js owns the state and calls these.
/* global uPlot */

/**
 * The network's hash rate and block time over the time actually mined: the work of the blocks
 * (their difficulty: expected hashes) over the gaps between them, leaving out the idle gaps,
 * when nobody mined (longer than 20 times the median gap and than 10 s: continuous mining
 * gives such a gap with a probability of about 2^-20). `blocks` are in height order with
 * `timestamp` (seconds) and `difficulty`; undefined for fewer than 2.
 */
window.tensormineMinedRate = (blocks) => {
  if (blocks.length < 2) return undefined;
  const gaps = blocks.slice(1).map((c, i) => Math.max(0, c.timestamp - blocks[i].timestamp));
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const idle = Math.max(20 * median, 10);
  let span = 0;
  let work = 0;
  let counted = 0;
  gaps.forEach((gap, i) => {
    if (gap > idle) return;
    span += gap;
    work += blocks[i + 1].difficulty;
    counted++;
  });
  return {
    hashesPerSecond: span > 0 ? work / span : undefined,
    blockSeconds: counted > 0 ? span / counted : 0,
    idleGaps: gaps.length - counted,
  };
};

window.tensorminePanels = (state) => {
  const $ = (id) => document.getElementById(id);
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  // ---------------------------------------------------------------------------------------
  // Charts (uPlot)
  // ---------------------------------------------------------------------------------------
  const charts = {};
  function chartWidth(el) {
    return Math.max(200, el.clientWidth);
  }

  function histogramData() {
    const rows = [...state.depthCounts.entries()].sort((a, b) => a[0] - b[0]);
    return rows.map(([depth, count]) => ({ depth, count }));
  }

  // Depths, counts, difficulties and whole-second intervals are integers: ticks fall on
  // integers only (no "0.25 s" between two blocks), with room between their labels.
  const INTEGER_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500]
    .flatMap((n) => [1, 1e3, 1e6, 1e9, 1e12].map((k) => n * k))
    .sort((a, b) => a - b);
  // Whole seconds and up (block times are Unix seconds).
  const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400];

  /** 1,048,576 as 1.05M: a label as narrow as the axis has room for. */
  function compact(v) {
    const a = Math.abs(v);
    for (const [k, unit] of [
      [1e12, 'T'],
      [1e9, 'G'],
      [1e6, 'M'],
      [1e3, 'k'],
    ]) {
      if (a >= k) return `${Number((v / k).toPrecision(3))}${unit}`;
    }
    return String(Math.round(v * 100) / 100);
  }

  /** The labels an axis drew, kept on its chart for the tests (data-axis0, data-axis1, ...). */
  function recorded(el, index, format) {
    return (_u, splits) => {
      const labels = splits.map(format);
      el.dataset[`axis${index}`] = JSON.stringify(labels);
      return labels;
    };
  }

  function renderHistogram() {
    const el = $('histogram');
    const rows = histogramData();
    el.dataset.histogram = JSON.stringify(rows);
    const data = [rows.map((r) => r.depth), rows.map((r) => r.count)];
    if (!charts.histogram) {
      charts.histogram = new uPlot(
        {
          width: chartWidth(el),
          height: 220,
          // Half a bar of room at each end: the first and last bars are whole.
          scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } },
          axes: [
            { ...axis('depth'), incrs: INTEGER_STEPS, space: 30, values: recorded(el, 0, compact) },
            { ...axis('blocks'), incrs: INTEGER_STEPS, values: recorded(el, 1, compact) },
          ],
          hooks: {
            setScale: [
              (u, key) => {
                if (key === 'x') el.dataset.xRange = JSON.stringify([u.scales.x.min, u.scales.x.max]);
              },
            ],
          },
          series: [
            { label: 'depth' },
            {
              label: 'blocks',
              stroke: css('--accent'),
              fill: css('--accent'),
              paths: uPlot.paths.bars({ size: [0.8, 40] }),
              points: { show: false },
            },
          ],
        },
        data,
        el,
      );
    } else charts.histogram.setData(data);
  }

  function axis(label) {
    return {
      label,
      stroke: css('--muted'),
      grid: { stroke: css('--border') },
      ticks: { stroke: css('--border') },
    };
  }

  function renderTimeline() {
    const el = $('timeline');
    const blocks = state.byHeight.filter((c) => !c.genesis);
    const xs = blocks.map((c) => c.timestamp);
    const difficulty = blocks.map((c) => c.difficulty);
    const interval = blocks.map((c, i) => (i === 0 ? null : c.timestamp - blocks[i - 1].timestamp));
    const data = [xs, difficulty, interval];
    if (!charts.timeline) {
      charts.timeline = new uPlot(
        {
          width: chartWidth(el),
          height: 220,
          scales: { x: { time: true }, d: { auto: true }, s: { auto: true } },
          axes: [
            { stroke: css('--muted'), grid: { stroke: css('--border') }, incrs: TIME_STEPS, space: 70 },
            {
              ...axis('difficulty'),
              scale: 'd',
              size: 60,
              incrs: INTEGER_STEPS,
              values: recorded(el, 1, compact),
            },
            {
              ...axis('interval (s)'),
              scale: 's',
              side: 1,
              size: 50,
              grid: { show: false },
              incrs: INTEGER_STEPS,
              values: recorded(el, 2, compact),
            },
          ],
          series: [
            {},
            {
              label: 'difficulty',
              scale: 'd',
              stroke: '#d9822b',
              width: 2,
              paths: uPlot.paths.stepped({ align: 1 }),
            },
            {
              label: 'block interval (s)',
              scale: 's',
              stroke: css('--accent'),
              width: 1,
              points: { show: true, size: 3 },
            },
          ],
        },
        data,
        el,
      );
    } else charts.timeline.setData(data);
  }

  window.addEventListener('resize', () => {
    for (const [id, chart] of Object.entries(charts))
      chart.setSize({ width: chartWidth($(id)), height: 220 });
  });

  // ---------------------------------------------------------------------------------------
  // Figures, peers, recent blocks
  // ---------------------------------------------------------------------------------------
  const fmt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString());
  function hashrate(h) {
    const units = ['H/s', 'kH/s', 'MH/s', 'GH/s', 'TH/s'];
    let i = 0;
    while (h >= 1000 && i < units.length - 1) {
      h /= 1000;
      i++;
    }
    return `${h.toFixed(h < 10 ? 2 : 1)} ${units[i]}`;
  }

  function renderFigures() {
    const s = state.status;
    $('occupied').textContent = fmt(state.cells.size);
    $('frontier').textContent = fmt(state.frontier.size);
    $('max-depth').textContent = fmt(state.maxDepth);
    $('miners').textContent = fmt(state.miners.length);
    if (s) {
      $('difficulty').textContent = fmt(s.difficulty);
      $('retarget').textContent = `${fmt(s.blocks_until_retarget)} blocks`;
    }
    const mined = window.tensormineMinedRate(state.byHeight.filter((c) => !c.genesis).slice(-64));
    if (mined !== undefined) {
      $('hashrate').textContent = mined.hashesPerSecond === undefined ? '–' : hashrate(mined.hashesPerSecond);
      $('block-time').textContent = `${mined.blockSeconds.toFixed(1)} s`;
      $('hashrate').title =
        mined.idleGaps === 0
          ? ''
          : `over the time mined: ${mined.idleGaps} idle gap(s) between blocks left out`;
    }
  }

  function renderRecent() {
    const list = $('recent');
    list.innerHTML = '';
    for (const cell of state.byHeight.slice(-10).reverse()) {
      if (cell.genesis) continue;
      const li = document.createElement('li');
      li.textContent = `#${cell.height} at (${cell.q}, ${cell.r}, ${-cell.q - cell.r}) depth ${cell.depth} by ${(state.miners[cell.miner] || '').slice(0, 12)}…`;
      list.append(li);
    }
  }

  function renderPeers(peers, self) {
    const svg = $('peers');
    const ns = 'http://www.w3.org/2000/svg';
    svg.innerHTML = '';
    // Alone: a small picture; with peers: the ring around this node.
    svg.setAttribute('viewBox', peers.length === 0 ? '-60 -30 120 60' : '-120 -120 240 240');
    svg.style.maxHeight = peers.length === 0 ? '90px' : '260px';
    const node = (x, y, r, fill, label) => {
      const c = document.createElementNS(ns, 'circle');
      c.setAttribute('cx', x);
      c.setAttribute('cy', y);
      c.setAttribute('r', r);
      c.setAttribute('fill', fill);
      svg.append(c);
      const t = document.createElementNS(ns, 'text');
      t.setAttribute('x', x);
      t.setAttribute('y', y + r + 10);
      t.setAttribute('text-anchor', 'middle');
      t.textContent = label;
      svg.append(t);
    };
    const now = Date.now() / 1000;
    peers.forEach((peer, i) => {
      const a = (2 * Math.PI * i) / Math.max(1, peers.length) - Math.PI / 2;
      const x = 85 * Math.cos(a);
      const y = 85 * Math.sin(a);
      const line = document.createElementNS(ns, 'line');
      line.setAttribute('x1', 0);
      line.setAttribute('y1', 0);
      line.setAttribute('x2', x);
      line.setAttribute('y2', y);
      line.setAttribute('stroke', css('--border'));
      svg.append(line);
      const fresh = peer.last_seen !== null && now - peer.last_seen < 120;
      node(x, y, 8, fresh ? css('--ok') : css('--bad'), peer.node_id.slice(0, 14));
    });
    node(0, 0, 12, css('--accent'), self ? self.slice(0, 16) : 'this node');
    const list = $('peer-list');
    list.innerHTML = '';
    if (peers.length === 0) {
      const li = document.createElement('li');
      li.textContent = 'no peers: this validator runs alone (local_only)';
      list.append(li);
    }
    for (const peer of peers) {
      const li = document.createElement('li');
      li.textContent = `${peer.node_id} · ${peer.url} · ${peer.latency_ms === null ? 'no answer yet' : `${Math.round(peer.latency_ms)} ms`}`;
      list.append(li);
    }
  }

  return { histogramData, renderHistogram, renderTimeline, renderFigures, renderRecent, renderPeers };
};
