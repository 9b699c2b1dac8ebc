// The Rollcall console's page: renders /api/events (one fleet document per snapshot) into the DOM.
// With requirements typed (or ?require= in the address), each event instead fetches
// api/fleet?require=..., the snapshot narrowed to them, and the page shows what such a query gets.
// Everything from the fleet is data from peers: it reaches the page through textContent and
// attributes only, never as markup.
'use strict';
(function () {
  const MAX_ROWS = 1000;            // rows in the DOM at once; a filter narrows a larger fleet
  const STATE_NAMES = { compatible: 'compatible', rejected: 'rejected', unreachable: 'unreachable',
    pending: 'pending', draining: 'draining', not_serving: 'not serving', lacks_requirement: 'lacks requirement' };
  const $ = (id) => document.getElementById(id);
  const tbody = document.querySelector('#workers tbody');
  const rows = new Map();           // endpoint → row {tr, cells, values}
  let fleet = null;
  let sortKey = 'endpoint';
  let sortDir = 1;
  let source = null;
  let required = (new URLSearchParams(location.search).get('require') || '').trim();
  let asked = 0;                    // the latest narrowed fetch: older answers are dropped
  // Read back by the browser test and the scale measurement: how long each update took.
  const stats = window.rollcallConsole = { renders: [], snapshot: -1, updates: 0 };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function labelsText(labels) {
    return Object.keys(labels || {}).map((k) => k + '=' + labels[k]).join(', ');
  }

  function ago(iso) {
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    return s < 120 ? s + ' s' : s < 7200 ? Math.round(s / 60) + ' min' : Math.round(s / 3600) + ' h';
  }

  function capabilitiesText(w) {
    return (w.capabilities || []).join(', ');
  }

  function sortValue(w, key) {
    if (key === 'labels') return labelsText(w.labels);
    if (key === 'capabilities') return capabilitiesText(w);
    const v = w[key];
    return v === null || v === undefined ? '' : String(v);
  }

  function compare(a, b) {
    const x = sortValue(a, sortKey), y = sortValue(b, sortKey);
    if (x !== y) return (x < y ? -1 : 1) * sortDir;
    return a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0;
  }

  function matches(w, text, state) {
    if (state && w.state !== state) return false;
    if (!text) return true;
    const hay = (w.endpoint + ' ' + (w.version || '') + ' ' + w.state + ' ' + w.reason + ' ' + (w.zone || '')
      + ' ' + labelsText(w.labels) + ' ' + capabilitiesText(w)).toLowerCase();
    return hay.indexOf(text) >= 0;
  }

  function renderHeader(f) {
    $('resolver').textContent = f.resolver;
    $('snapshot').textContent = 'snapshot ' + f.snapshot + ' · ' + new Date(f.publishedAt).toLocaleTimeString();
    const counts = $('counts');
    clear(counts);
    const c = f.counts;
    const parts = [['candidates', c.candidates], ['compatible', c.compatible], ['rejected', c.rejected],
      ['unreachable', c.unreachable], ['pending', c.pending], ['draining', c.draining], ['not_serving', c.notServing]];
    if (f.requirements && f.requirements.length) parts.push(['lacks_requirement', c.lacksRequirement]);
    for (const [name, n] of parts) {
      const d = el('div', 'count ' + name);
      d.appendChild(el('b', null, n));
      d.appendChild(document.createTextNode(STATE_NAMES[name] || name));
      counts.appendChild(d);
    }
    $('policy').textContent = f.policy;
    const cohort = $('cohort');
    clear(cohort);
    if (f.selection.cohort !== null) {
      cohort.appendChild(document.createTextNode('chosen cohort '));
      cohort.appendChild(el('span', 'cohort mono', f.selection.cohort === '' ? '(no version)' : f.selection.cohort));
    }
    $('explanation').textContent = f.selection.explanation;
    $('selector').textContent = f.selection.selector ? 'selector ' + f.selection.selector : '';
    $('preference').textContent = f.selection.preference;
    $('discovery').textContent = f.discovery.description;
    const health = $('discovery-health');
    if (f.discovery.staleSince) {
      health.className = 'stale';
      health.textContent = 'stale since ' + f.discovery.staleSince + ' (' + ago(f.discovery.staleSince)
        + '): the candidates are the last good set';
    } else {
      health.className = 'healthy';
      health.textContent = 'healthy';
    }
    $('discovery-problem').textContent = f.discovery.problem || '';
    const reqs = f.requirements || [];
    $('require-note').textContent = reqs.length === 0
      ? 'every compatible worker: type what a query needs to see which workers it would get'
      : 'a query that requires ' + reqs.join(', ') + ' gets ' + f.counts.compatible + ' worker'
        + (f.counts.compatible === 1 ? '' : 's') + '; ' + f.counts.lacksRequirement + ' other compatible worker'
        + (f.counts.lacksRequirement === 1 ? ' is' : 's are') + ' left out (the reason says what each lacks)';
  }

  function renderVersions(f) {
    const box = $('versions');
    clear(box);
    let max = 1;
    for (const v of f.versions) max = Math.max(max, v.workers);
    for (const v of f.versions) {
      const chosen = f.selection.cohort !== null && f.selection.cohort === v.version;
      box.appendChild(el('span', 'mono' + (chosen ? ' chosen' : ''), v.version === '' ? '(no version)' : v.version));
      const bar = el('div', 'bar');
      bar.title = v.compatible + ' of ' + v.workers + ' compatible';
      const inUse = el('div', 'in');
      inUse.style.width = (100 * v.compatible / max) + '%';
      const out = el('div', 'out');
      out.style.width = (100 * (v.workers - v.compatible) / max) + '%';
      bar.appendChild(inUse);
      bar.appendChild(out);
      box.appendChild(bar);
      box.appendChild(el('span', 'muted', v.compatible + ' / ' + v.workers + (chosen ? ' (chosen)' : '')));
    }
    if (f.versions.length === 0) box.appendChild(el('span', 'muted', 'no worker has answered yet'));
  }

  function setCell(row, i, text) {
    if (row.values[i] !== text) {
      row.values[i] = text;
      row.cells[i].textContent = text;
    }
  }

  // 'draining 3s ago (2 holders)': a drain's age and, when the worker says, how many coordinators still hold it.
  function stateText(w) {
    const held = typeof w.holders === 'number'
      ? ' (' + w.holders + (w.holders === 1 ? ' holder)' : ' holders)') : '';
    return (STATE_NAMES[w.state] || w.state) + (w.drainingSince ? ' ' + ago(w.drainingSince) : '') + held;
  }

  function rowFor(w) {
    let row = rows.get(w.endpoint);
    if (!row) {
      const tr = el('tr');
      tr.dataset.endpoint = w.endpoint;
      const names = ['endpoint', 'version', 'state', 'reason', 'zone', 'labels', 'capabilities'];
      const cells = names.map((n) => {
        const td = el('td', n);
        tr.appendChild(td);
        return td;
      });
      const badge = el('span', 'state');
      cells[2].appendChild(badge);
      row = { tr, cells: [cells[0], cells[1], badge, cells[3], cells[4], cells[5], cells[6]], values: [], state: '' };
      rows.set(w.endpoint, row);
    }
    setCell(row, 0, w.endpoint);
    setCell(row, 1, w.version === null ? '—' : (w.version === '' ? '(no version)' : w.version));
    setCell(row, 2, stateText(w));
    if (row.state !== w.state) {
      row.state = w.state;
      row.cells[2].className = 'state ' + w.state;
      row.tr.dataset.state = w.state;
    }
    setCell(row, 3, w.reason);
    setCell(row, 4, w.zone || '');
    setCell(row, 5, labelsText(w.labels));
    setCell(row, 6, capabilitiesText(w));
    row.drainingSince = w.drainingSince;
    row.worker = w;
    return row;
  }

  function renderTable() {
    if (!fleet) return;
    const text = $('filter').value.trim().toLowerCase();
    const state = $('state-filter').value;
    const shown = fleet.workers.filter((w) => matches(w, text, state));
    shown.sort(compare);
    const visible = shown.slice(0, MAX_ROWS);
    const keep = new Set();
    let at = tbody.firstChild;
    for (const w of visible) {
      const row = rowFor(w);
      keep.add(w.endpoint);
      if (row.tr !== at) {
        tbody.insertBefore(row.tr, at);
      } else {
        at = at.nextSibling;
      }
    }
    while (at) {
      const next = at.nextSibling;
      tbody.removeChild(at);
      at = next;
    }
    for (const [url] of rows) {
      if (!keep.has(url)) rows.delete(url);
    }
    $('shown').textContent = shown.length === fleet.workers.length && visible.length === shown.length
      ? fleet.workers.length + ' workers'
      : 'showing ' + visible.length + ' of ' + shown.length + ' matching (' + fleet.workers.length + ' workers)'
        + (visible.length < shown.length ? '; filter to see the rest' : '');
    for (const th of document.querySelectorAll('#workers th')) {
      th.className = th.dataset.key === sortKey ? 'sorted ' + (sortDir > 0 ? 'asc' : 'desc') : '';
    }
  }

  function renderTimeline(f) {
    const list = $('timeline');
    clear(list);
    for (const e of f.timeline) {
      const li = el('li');
      li.appendChild(el('span', 'when', '#' + e.snapshot + ' ' + new Date(e.at).toLocaleTimeString()));
      li.appendChild(el('span', 'muted', e.counts));
      if (e.changes.length || e.more) {
        const ul = el('ul');
        for (const c of e.changes) ul.appendChild(el('li', 'change', c));
        if (e.more) ul.appendChild(el('li', 'muted', 'and ' + e.more + ' more'));
        li.appendChild(ul);
      }
      list.appendChild(li);
    }
  }

  function show(text, parseMs) {
    const start = performance.now();
    const f = JSON.parse(text);
    const parsed = performance.now();
    if (fleet && f.snapshot < fleet.snapshot) return;
    fleet = f;
    renderHeader(f);
    renderVersions(f);
    renderTable();
    renderTimeline(f);
    const done = performance.now();
    stats.snapshot = f.snapshot;
    stats.updates++;
    stats.renders.push({ snapshot: f.snapshot, workers: f.workers.length, bytes: text.length,
      parseMs: parsed - start, renderMs: done - parsed, totalMs: done - start, doneAt: Date.now() });
    if (stats.renders.length > 200) stats.renders.shift();
  }

  function live(state, text) {
    const l = $('live');
    l.className = 'live ' + state;
    l.textContent = text;
  }

  // The current snapshot narrowed to `required` (none: the whole), or the console's 400 naming what is wrong.
  function fetchNarrowed() {
    const mine = ++asked;
    fetch('api/fleet?require=' + encodeURIComponent(required), { cache: 'no-store' })
      .then((r) => r.text().then((t) => ({ ok: r.ok, t })))
      .then(({ ok, t }) => {
        if (mine !== asked) return;
        $('require-problem').textContent = ok ? '' : t;
        if (ok) show(t);
      }).catch(() => {});
  }

  function applyRequirements(text) {
    required = text.trim();
    const url = new URL(location.href);
    if (required) url.searchParams.set('require', required); else url.searchParams.delete('require');
    history.replaceState(null, '', url);
    fleet = null;                   // the same snapshot number, another view of it
    fetchNarrowed();
  }

  function connect() {
    source = new EventSource('api/events');
    source.addEventListener('fleet', (e) => { if (required) fetchNarrowed(); else show(e.data); });
    source.onopen = () => live('on', 'live');
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // Refused (e.g. the console's stream limit) or gone: show the current state, try again later.
        live('off', 'not connected; retrying');
        fetchNarrowed();
        setTimeout(connect, 5000);
      } else {
        live('connecting', 'reconnecting…');
      }
    };
  }

  $('require').value = required;
  $('require-form').addEventListener('submit', (e) => {
    e.preventDefault();
    applyRequirements($('require').value);
  });
  $('filter').addEventListener('input', renderTable);
  $('state-filter').addEventListener('change', renderTable);
  for (const th of document.querySelectorAll('#workers th')) {
    th.addEventListener('click', () => {
      if (sortKey === th.dataset.key) sortDir = -sortDir; else { sortKey = th.dataset.key; sortDir = 1; }
      renderTable();
    });
  }
  // Drains in progress: how long, updated every second without a new snapshot.
  setInterval(() => {
    for (const row of rows.values()) {
      if (row.drainingSince) setCell(row, 2, stateText(row.worker));
    }
  }, 1000);
  connect();
})();
