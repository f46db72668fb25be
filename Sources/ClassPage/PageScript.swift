/// The class page's script: the event stream (Server-Sent Events) drawn into the board grid, the
/// file given by the file input or dropped, the choice of boards, start and retry. Plain
/// JavaScript, no library; every request carries the token of the page's URL.
enum PageScript {
    static let source = """
        'use strict';
        const token = new URLSearchParams(location.search).get('token') || '';
        const $ = (id) => document.getElementById(id);
        let boards = [];            // BoardView objects, in the page's order
        let chosen = new Set();     // names of the boards chosen
        let hasFile = false, running = false, backend = 'simulated', bluetoothOK = true;

        function api(path, body, headers) {
          return fetch(path, { method: 'POST', body: body,
            headers: Object.assign({ 'X-Bitflash-Token': token }, headers || {}) });
        }
        function time(s) {
          if (s === null || s === undefined) return '–';
          s = Math.round(s);
          return s >= 60 ? Math.floor(s / 60) + ' min ' + (s % 60) + ' s' : s + ' s';
        }
        function words(status) {
          return { idle: 'Ready', waiting: 'Waiting', working: '', finished: '✓ Done', verified: '✓ Verified',
                   unverified: '! Unverified', failed: '✗ Failed' }[status];
        }

        function card(b) {
          let li = document.querySelector('li[data-board="' + CSS.escape(b.name) + '"]');
          if (!li) {
            li = document.createElement('li');
            li.className = 'board';
            li.dataset.board = b.name;
            li.innerHTML = '<header><input type="checkbox"><label class="name"></label></header>' +
              '<div class="meta"></div><div class="path"></div><div class="big"></div>' +
              '<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div class="fill"></div></div>' +
              '<div class="line"></div><div class="reason"></div>' +
              '<button type="button" class="retry" hidden>Retry</button>';
            const box = li.querySelector('input');
            box.id = 'choose-' + b.name;
            li.querySelector('label').htmlFor = box.id;
            box.addEventListener('change', () => { box.checked ? chosen.add(b.name) : chosen.delete(b.name); changed(); });
            li.querySelector('.retry').addEventListener('click', () => start([b.name]));
            $('boards').appendChild(li);
          }
          return li;
        }

        function draw(b) {
          const li = card(b);
          li.dataset.status = b.status;
          li.querySelector('input').checked = chosen.has(b.name);
          li.querySelector('input').disabled = running;
          li.querySelector('label').textContent = b.name;
          li.querySelector('.meta').textContent = [b.address, b.mode,
            b.signal !== null && b.signal !== undefined ? b.signal + ' dBm' : null].filter(Boolean).join(' · ');
          li.querySelector('.path').textContent = b.path ? 'Path: ' + b.path : '';
          const pct = b.total > 0 ? Math.floor(100 * b.done / b.total) : (b.status === 'verified' || b.status === 'finished' ? 100 : 0);
          li.querySelector('.big').textContent = b.status === 'working' ? pct + '%' : words(b.status);
          const bar = li.querySelector('.bar');
          bar.setAttribute('aria-valuenow', String(pct));
          bar.querySelector('.fill').style.width = pct + '%';
          const line = [];
          if (b.status === 'working') {
            if (b.phase) line.push(b.phase);
            if (b.rate) line.push(b.rate);
            if (b.eta !== null && b.eta !== undefined) line.push(time(b.eta) + ' left');
          } else if (b.seconds !== null && b.seconds !== undefined && b.status !== 'idle') {
            line.push('took ' + time(b.seconds));
          }
          if (b.retries > 0) line.push(b.retries + ' retries');
          if (b.note) line.push(b.note);
          li.querySelector('.line').textContent = line.join(' · ');
          li.querySelector('.reason').textContent = b.status === 'failed' ? (b.reason || 'failed') : '';
          const retry = li.querySelector('.retry');
          retry.hidden = b.status !== 'failed';
          retry.disabled = running;
        }

        function counts(c) {
          $('n-done').textContent = c.finished + c.verified + c.unverified;
          $('n-failed').textContent = c.failed;
          $('n-working').textContent = c.working;
          $('n-waiting').textContent = c.waiting;
          $('class-eta').textContent = c.running ? time(c.eta) : '–';
          running = c.running;
          if (c.estimate) $('estimate').textContent = 'Estimate: ' + c.estimate;
          controls();
        }

        function controls() {
          const n = chosen.size;
          $('start').disabled = running || !hasFile || n === 0 || !bluetoothOK;
          $('start').textContent = n === boards.length && n > 1 ? 'Flash all ' + n + ' boards' : 'Flash ' + n + (n === 1 ? ' board' : ' boards');
          $('retry-failed').disabled = running || !boards.some((b) => b.status === 'failed');
          $('select-all').disabled = running; $('select-none').disabled = running;
        }

        function summary(f) {
          const dl = $('summary');
          dl.innerHTML = '';
          if (!f) { dl.hidden = true; return; }
          const rows = [['File', f.name], ['Format', f.format + ', ' + f.size.toLocaleString() + ' bytes'],
            ['For', f.boards.join(', ')], ['MakeCode runtime', f.runtime || 'none (no MakeCode program)'],
            ['Program', f.programBytes ? f.programBytes.toLocaleString() + ' bytes' : '–']];
          for (const w of f.warnings) rows.push(['Warning', w]);
          for (const [k, v] of rows) {
            const dt = document.createElement('dt'); dt.textContent = k;
            const dd = document.createElement('dd'); dd.textContent = v;
            dl.append(dt, dd);
          }
          dl.hidden = false;
        }

        function state(s) {
          backend = s.backend;
          bluetoothOK = s.bluetooth.available;
          $('bluetooth').hidden = bluetoothOK;
          $('bluetooth').textContent = bluetoothOK ? '' : (s.bluetooth.problem || 'Bluetooth is not available.');
          $('scan').hidden = backend !== 'bluez';
          const first = boards.length === 0;
          boards = s.boards;
          const names = new Set(boards.map((b) => b.name));
          for (const li of [...$('boards').children]) if (!names.has(li.dataset.board)) li.remove();
          if (first) boards.forEach((b) => chosen.add(b.name));
          chosen = new Set([...chosen].filter((n) => names.has(n)));
          hasFile = !!s.file;
          summary(s.file);
          running = s.class.running;
          boards.forEach(draw);
          counts(s.class);
        }

        function listen() {
          const events = new EventSource('api/events?token=' + encodeURIComponent(token));
          events.onmessage = (m) => {
            const msg = JSON.parse(m.data);
            if (msg.type === 'state') state(msg.state);
            if (msg.type === 'board') {
              const i = boards.findIndex((b) => b.name === msg.board.name);
              if (i >= 0) boards[i] = msg.board;
              running = msg.class.running;
              draw(msg.board);
              counts(msg.class);
            }
          };
        }

        function refuse(text) {
          $('refusal').textContent = text || '';
          $('refusal').hidden = !text;
        }

        async function upload(file) {
          if (!file) return;
          refuse('');
          const bytes = await file.arrayBuffer();
          const r = await api('api/file', bytes, { 'X-File-Name': encodeURIComponent(file.name),
            'Content-Type': 'application/octet-stream' });
          const body = await r.json().catch(() => ({ error: 'the server did not answer' }));
          if (!r.ok) { refuse(body.error); return; }
          hasFile = true;
          summary(body);
          changed();
        }

        let estimateTimer = null;
        function changed() {
          controls();
          clearTimeout(estimateTimer);
          if (!hasFile || chosen.size < 2 || running) { $('estimate').textContent = ''; return; }
          estimateTimer = setTimeout(async () => {
            const r = await api('api/estimate', JSON.stringify({ boards: [...chosen] }), { 'Content-Type': 'application/json' });
            const body = await r.json().catch(() => ({}));
            $('estimate').textContent = body.estimate ? 'Estimate: ' + body.estimate : (body.error || '');
          }, 150);
        }

        async function start(names) {
          refuse('');
          const r = await api('api/start', JSON.stringify({ boards: names }), { 'Content-Type': 'application/json' });
          if (!r.ok) { const body = await r.json().catch(() => ({})); refuse(body.error || 'refused'); }
        }

        document.addEventListener('DOMContentLoaded', () => {
          $('file').addEventListener('change', (e) => upload(e.target.files[0]));
          const drop = $('drop');
          drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
          drop.addEventListener('dragleave', () => drop.classList.remove('over'));
          drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); upload(e.dataTransfer.files[0]); });
          drop.querySelector('label').tabIndex = 0;
          drop.querySelector('label').addEventListener('keydown', (e) => {
            if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('file').click(); }
          });
          $('select-all').addEventListener('click', () => { boards.forEach((b) => chosen.add(b.name)); boards.forEach(draw); changed(); });
          $('select-none').addEventListener('click', () => { chosen.clear(); boards.forEach(draw); changed(); });
          $('start').addEventListener('click', () => start(boards.map((b) => b.name).filter((n) => chosen.has(n))));
          $('retry-failed').addEventListener('click', () => start(boards.filter((b) => b.status === 'failed').map((b) => b.name)));
          $('scan').addEventListener('click', async () => { $('scan').disabled = true; await api('api/scan'); $('scan').disabled = false; });
          listen();
        });
        """
}
