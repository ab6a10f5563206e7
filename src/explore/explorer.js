// passlab's pipeline explorer, in the page. `root` is the explorer's
// element; `data` is {meta, blobs}: meta (gzip, base64) holds the passes
// column by column and the functions; blobs[i] (gzip, base64, or null when
// left out) holds function i's history: its initial text and each version
// as [pass, instructions, deleted, edits, renumbering]: the previous text's
// unnamed values and metadata renumbered (breakpoints old, new, ...; passlab::diff::
// renumber, whose rules renumberLines follows), then an edit script (keep,
// delete, insert triples). A function's history is decompressed when it is
// selected.
function plabExplore(root, data, hljs) {
  const UNITS = ["module", "cgscc", "function", "loop", "other"];
  const CONTEXT = 3;
  // The comment passlab ends an instruction line with when the module has
  // debug info (src/module/lines.rs), and how many source colours the
  // page's style has (highlight::SOURCE_COLOURS).
  const SOURCE_LINE = / ; (line \d+|[^\s;]+:\d+)$/;
  const SOURCE_COLOURS = 12;

  const gunzip = plabGunzip;
  const el = plabEl;

  const lineCache = new Map();
  function highlightLine(line) {
    let h = lineCache.get(line);
    if (h === undefined) {
      try {
        h = hljs.highlight(line, { language: "llvm", ignoreIllegals: true }).value;
      } catch (e) {
        h = line.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
      }
      if (lineCache.size > 50000) lineCache.clear();
      lineCache.set(line, h);
    }
    return h;
  }

  // passlab::diff::renumber on lines: the digits after `%` and a line's
  // leading digits before `:` (1 to 9 digits, no leading zero) mapped by
  // the last breakpoint at or below them.
  // A line of IR as its text between numbers (`parts`, one more than
  // `nums`) and the numbers passlab::diff::renumber maps: the digits after
  // `%` or `!` and a line's leading digits before `:`, 1 to 9 digits without a
  // leading zero (others stay text). `max` is the largest number.
  // Metadata (`!7`) has numbers of its own, keyed from METADATA on
  // (passlab::diff::METADATA).
  const NUMBER = /(^\d+(?=:))|%(\d+)|!(\d+)/g;
  const METADATA = 2147483648;
  function tokenize(line) {
    const parts = [];
    const nums = [];
    let at = 0;
    let max = -1;
    NUMBER.lastIndex = 0;
    for (let m; (m = NUMBER.exec(line)); ) {
      const digits = m[1] || m[2] || m[3];
      if (digits.length > 9 || (digits.length > 1 && digits.charCodeAt(0) === 48)) continue;
      const start = m.index + (m[1] ? 0 : 1);
      parts.push(line.slice(at, start));
      const n = Number(digits) + (m[3] ? METADATA : 0);
      nums.push(n);
      if (n > max) max = n;
      at = start + digits.length;
    }
    parts.push(at ? line.slice(at) : line);
    return { parts, nums, max };
  }

  function lineText(l) {
    if (!l.nums.length) return l.parts[0];
    let s = l.parts[0];
    for (let i = 0; i < l.nums.length; i++) {
      const n = l.nums[i];
      s += (n >= METADATA ? n - METADATA : n) + l.parts[i + 1];
    }
    return s;
  }

  function splitLines(text) {
    if (!text) return [];
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    return lines.map(tokenize);
  }

  // passlab::diff::renumber on tokenized lines: each number at or past the
  // first breakpoint moved by the offset of the last breakpoint at or below
  // it (a line whose numbers all come before is shared, not copied).
  function renumberLines(lines, map) {
    if (!map || !map.length) return lines;
    const first = map[0];
    const mapN = (n) => {
      if (n < first) return n;
      let lo = 0;
      let hi = map.length / 2;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (map[2 * mid] <= n) lo = mid + 1;
        else hi = mid;
      }
      // A value's breakpoint does not move metadata.
      if (n >= METADATA && map[2 * lo - 2] < METADATA) return n;
      const v = map[2 * lo - 1] + (n - map[2 * lo - 2]);
      return v > 4294967295 ? n : v;
    };
    return lines.map((l) => {
      if (l.max < first) return l;
      const nums = l.nums.map(mapN);
      return { parts: l.parts, nums, max: Math.max(-1, ...nums) };
    });
  }

  function applyEdits(lines, edits) {
    const out = [];
    let o = 0;
    for (let j = 0; j < edits.length; j += 3) {
      for (let k = 0; k < edits[j]; k++) out.push(lines[o++]);
      o += edits[j + 1];
      for (const l of splitLines(edits[j + 2])) out.push(l);
    }
    while (o < lines.length) out.push(lines[o++]);
    return out;
  }

  async function start() {
    const meta = JSON.parse(await gunzip(data.meta));
    const N = meta.pn.length;
    const F = meta.functions.length;
    const histories = new Map();
    const state = { f: -1, pass: -1, hideUnchanged: false, sideBySide: false, whole: false, onlyChanged: true, filter: "", onlyMissed: false, passFilter: "", visible: [] };
    // `:explore F pass=… changed=yes` fills the pass search.
    if (meta.search) {
      state.passFilter = meta.search[0] || "";
      state.hideUnchanged = !!meta.search[1];
    }
    // The run's optimization remarks (when a remarks instrument recorded
    // it), by pass execution.
    const R = meta.remarks || { x: [], f: [], k: [], p: [], m: [], l: [], c: [], s: [] };
    const KINDS = ["passed", "missed", "analysis", "failure"];
    const remarksAt = new Map();
    R.x.forEach((x, r) => {
      if (!remarksAt.has(x)) remarksAt.set(x, []);
      remarksAt.get(x).push(r);
    });
    // The remarks of pass execution i on function f (all functions: f < 0).
    function remarksOf(i, f) {
      return (remarksAt.get(i) || []).filter((r) => (f < 0 || R.f[r] === f) && (!state.onlyMissed || R.k[r] === 1));
    }

    function reaches(i, f) {
      const s = meta.rs[i];
      if (s < 0) return true;
      const n = meta.rf[s];
      for (let k = 1; k <= n; k++) if (meta.rf[s + k] === f) return true;
      return false;
    }

    // The same rule as Recording::passes_on: the passes that ran on f and
    // the passes they ran inside.
    const passesCache = new Map();
    function passesOn(f) {
      if (passesCache.has(f)) return passesCache.get(f);
      const keep = new Uint8Array(N);
      for (let i = 0; i < N; i++) {
        if (!keep[i] && reaches(i, f)) {
          keep[i] = 1;
          let u = meta.pp[i];
          while (u >= 0 && !keep[u]) {
            keep[u] = 1;
            u = meta.pp[u];
          }
        }
      }
      const out = [];
      for (let i = 0; i < N; i++) if (keep[i]) out.push(i);
      if (passesCache.size > 64) passesCache.clear();
      passesCache.set(f, out);
      return out;
    }

    async function history(f) {
      if (histories.has(f)) return histories.get(f);
      const blob = data.blobs[f];
      if (!blob) return null;
      const h = JSON.parse(await gunzip(blob));
      // Texts of each version, computed as they are needed.
      h.texts = [splitLines(h.i)];
      h.f = f;
      h.byPass = new Map();
      h.v.forEach((v, k) => h.byPass.set(v[0], k));
      histories.set(f, h);
      return h;
    }

    // The text a history ends with must hash as passlab's did (lines_hash
    // in src/explore/mod.rs): a page that replays it wrongly says so.
    function checkLast(h) {
      const enc = new TextEncoder();
      let x = 0x811c9dc5;
      for (const line of h.texts[h.v.length]) {
        for (const b of enc.encode(lineText(line) + "\n")) {
          x ^= b;
          x = Math.imul(x, 0x01000193) >>> 0;
        }
      }
      const [name, , , , , want] = meta.functions[h.f];
      if (x !== want) {
        root.dataset.mismatch = name;
        root.prepend(el("div", "plab-x-warn", `this page's history of ${name} does not give the text passlab recorded (a bug in passlab: :explore ${name} shows its diffs)`));
      }
    }

    function textAt(h, k) {
      while (h.texts.length <= k) {
        const n = h.texts.length;
        const v = h.v[n - 1];
        h.texts.push(applyEdits(renumberLines(h.texts[n - 1], v[4]), v[3]));
        if (n === h.v.length) checkLast(h);
      }
      return h.texts[k];
    }

    function passLabel(i) {
      const u = meta.pu[i];
      const name = meta.names[meta.pn[i]];
      return u === 0 || u === 2 ? name : `${name} [${UNITS[u]} ${meta.targets[meta.pt[i]]}]`;
    }

    // ---- layout
    root.textContent = "";
    const totalVersions = meta.functions.reduce((s, f) => s + f[3], 0);
    const changedFns = meta.functions.filter((f) => f[3] > 0).length;
    const embedded = meta.functions.filter((f) => f[4]).length;
    const head = el("div", "plab-x-head");
    head.append(
      el("b", "", `${meta.pipeline}`),
      document.createTextNode(` on ${meta.module}: ${N} pass executions, ${F} functions (${changedFns} changed, ${totalVersions} versions)`)
    );
    if (embedded < changedFns) {
      head.append(el("div", "plab-x-note",
        `Diffs of the ${embedded} functions changed most are in this page; for the others, :explore FUNCTION shows them.`));
    }
    const body = el("div", "plab-x-body");
    const fnPane = el("div", "plab-x-pane plab-x-fns");
    const passPane = el("div", "plab-x-pane plab-x-passes");
    const diffPane = el("div", "plab-x-pane plab-x-diff");
    body.append(fnPane, passPane, diffPane);
    root.append(head, body);

    function toggle(label, key, after) {
      const l = el("label", "plab-x-toggle");
      const box = el("input");
      box.type = "checkbox";
      box.checked = state[key];
      box.addEventListener("change", () => {
        state[key] = box.checked;
        after();
      });
      l.append(box, document.createTextNode(" " + label));
      return l;
    }

    // ---- functions
    const filter = el("input", "plab-x-filter");
    filter.placeholder = "filter functions";
    filter.addEventListener("input", () => {
      state.filter = filter.value;
      renderFunctions();
    });
    const fnList = el("div", "plab-x-list");
    fnPane.append(filter, toggle("only functions that changed", "onlyChanged", renderFunctions), fnList);
    const order = [...Array(F).keys()].sort((a, b) => meta.functions[b][3] - meta.functions[a][3] || (meta.functions[a][0] < meta.functions[b][0] ? -1 : 1));

    // Long lists drawn in steps: a screenful at once (what the first frame
    // lays out), then rows for 10 ms per task, so that a click is answered
    // between two steps (a newer drawing of the same pane stops an older
    // one); the pane's `data-complete` is set when all are drawn.
    const drawing = {};
    function inSteps(key, pane, n, one) {
      const token = (drawing[key] = (drawing[key] || 0) + 1);
      delete pane.dataset.complete;
      let at = 0;
      const step = (rows, ms) => {
        if (drawing[key] !== token) return;
        const until = performance.now() + ms;
        const end = Math.min(n, at + rows);
        while (at < end && (at % 32 !== 0 || performance.now() < until)) one(at++);
        if (at < n) setTimeout(() => step(Infinity, 10), 0);
        else pane.dataset.complete = "1";
      };
      step(120, 40);
    }

    const fnRows = new Map();
    function markFunction(f) {
      for (const r of fnList.querySelectorAll(".plab-x-sel")) r.classList.remove("plab-x-sel");
      const r = fnRows.get(f);
      if (r) r.classList.add("plab-x-sel");
    }

    function renderFunctions() {
      fnList.textContent = "";
      fnRows.clear();
      const whole = el("div", "plab-x-row" + (state.f < 0 ? " plab-x-sel" : ""), "(whole module)");
      fnRows.set(-1, whole);
      whole.addEventListener("click", () => selectFunction(-1));
      fnList.append(whole);
      const needle = state.filter.toLowerCase();
      let shown = 0;
      for (const i of order) {
        const [name, before, after, versions, has] = meta.functions[i];
        if (state.onlyChanged && versions === 0) continue;
        if (needle && !name.toLowerCase().includes(needle)) continue;
        if (++shown > 5000) {
          fnList.append(el("div", "plab-x-more", "… more: filter to find them"));
          break;
        }
        const row = el("div", "plab-x-row" + (i === state.f ? " plab-x-sel" : ""));
        row.dataset.function = name;
        row.append(el("span", "plab-x-name", name), el("span", "plab-x-num", `${versions}× ${before}→${after}`));
        if (!has && versions) row.classList.add("plab-x-nodata");
        row.addEventListener("click", () => selectFunction(i));
        fnRows.set(i, row);
        fnList.append(row);
      }
    }

    // ---- passes
    const passHead = el("div", "plab-x-summary");
    const passList = el("div", "plab-x-list");
    // The pass search (the same rule as PassSearch in src/explore/mod.rs):
    // a part of a pass's name or of the IR unit it ran on, ignoring case,
    // or a glob (`*`, `?`, `[…]`) over the whole of one of them.
    const passSearch = el("input", "plab-x-filter plab-x-psearch");
    passSearch.type = "search";
    passSearch.placeholder = "search passes (licm, loop-*)";
    passSearch.title = "a part of a pass's name, or a glob such as loop-*; ↑ ↓ move through the passes, Enter selects, Esc clears";
    passSearch.setAttribute("aria-label", "search passes");
    passSearch.value = state.passFilter;
    const passCount = el("span", "plab-x-count");
    passCount.setAttribute("aria-live", "polite");
    const searchRow = el("div", "plab-x-searchrow");
    searchRow.append(passSearch, passCount);
    const refilter = () => renderPasses().then(keepSelection);
    passSearch.addEventListener("input", () => {
      state.passFilter = passSearch.value.trim();
      refilter();
    });
    passSearch.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        stepPass(e.key === "ArrowDown" ? 1 : -1);
      } else if (e.key === "Enter") {
        e.preventDefault();
        if (!passList.querySelector(".plab-x-sel")) stepPass(1);
      } else if (e.key === "Escape" && passSearch.value) {
        e.preventDefault();
        passSearch.value = "";
        state.passFilter = "";
        refilter();
      }
    });
    passPane.append(passHead, searchRow, toggle("hide passes that changed nothing", "hideUnchanged", refilter), passList);

    function passMatcher(pattern) {
      const needle = pattern.toLowerCase();
      if (!needle) return null;
      let test;
      if (/[*?[]/.test(needle)) {
        let re = "";
        for (let j = 0; j < needle.length; j++) {
          const c = needle[j];
          const end = c === "[" ? needle.indexOf("]", j + 2) : -1;
          if (c === "*") re += ".*";
          else if (c === "?") re += ".";
          else if (end > 0) {
            let cls = needle.slice(j + 1, end).replace(/\\/g, "\\\\");
            if (cls[0] === "!") cls = "^" + cls.slice(1);
            re += "[" + cls + "]";
            j = end;
          } else re += c.replace(/[.+^${}()|\\[\]]/g, "\\$&");
        }
        let rx;
        try {
          rx = new RegExp("^(?:" + re + ")$", "i");
        } catch (e) {
          rx = /(?!)/;
        }
        test = (t) => rx.test(t);
      } else {
        test = (t) => t.toLowerCase().includes(needle);
      }
      return (i) => {
        if (test(meta.names[meta.pn[i]])) return true;
        const u = meta.pu[i];
        if (u === 0 || u === 2) return false;
        const t = meta.targets[meta.pt[i]];
        return test(`${UNITS[u]} ${t}`) || test(t);
      };
    }

    // The passes' names nearest `word` (as nothing_matched in
    // src/explore/mod.rs: a small edit distance, or a long shared part).
    function nearestNames(word, indexes) {
      const w = word.toLowerCase();
      const names = [...new Set(indexes.map((i) => meta.names[meta.pn[i]]))];
      const dist = (a, b) => {
        let prev = [...Array(b.length + 1).keys()];
        for (let x = 1; x <= a.length; x++) {
          const cur = [x];
          for (let y = 1; y <= b.length; y++) cur.push(Math.min(prev[y] + 1, cur[y - 1] + 1, prev[y - 1] + (a[x - 1] === b[y - 1] ? 0 : 1)));
          prev = cur;
        }
        return prev[b.length];
      };
      const common = (a, b) => {
        let best = 0;
        let prev = new Array(b.length + 1).fill(0);
        for (let x = 0; x < a.length; x++) {
          const cur = new Array(b.length + 1).fill(0);
          for (let y = 0; y < b.length; y++) if (a[x] === b[y]) best = Math.max(best, (cur[y + 1] = prev[y] + 1));
          prev = cur;
        }
        return best;
      };
      const limit = Math.max(2, Math.floor(w.length / 3));
      const close = names.map((n) => [dist(w, n), n]).filter(([d]) => d <= limit);
      if (close.length) return close.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)).slice(0, 5).map(([, n]) => n);
      const least = Math.max(4, Math.ceil((w.length * 3) / 5));
      return names
        .map((n) => [common(w, n), n])
        .filter(([k]) => k >= least)
        .sort((a, b) => b[0] - a[0] || a[1].length - b[1].length)
        .slice(0, 5)
        .map(([, n]) => n);
    }

    // What the list says when the search keeps no pass.
    function noneMatch(indexes, changedOnly, on) {
      const match = passMatcher(state.passFilter);
      const matching = match ? indexes.filter(match).length : indexes.length;
      let text;
      if (matching && changedOnly) text = `${matching} pass${matching === 1 ? "" : "es"}${match ? ` matching '${state.passFilter}'` : ""} ran on ${on}, none changed it`;
      else {
        const near = nearestNames(state.passFilter, indexes);
        text = `no pass matching '${state.passFilter}' ran on ${on}` + (near.length ? `; nearest: ${near.join(", ")}` : "");
      }
      passList.append(el("div", "plab-x-more plab-x-nomatch", text));
    }

    // The row after (1) or before (-1) the selected one, selected.
    function stepPass(d) {
      const rows = [...passList.querySelectorAll(".plab-x-pass")];
      if (!rows.length) return;
      const at = rows.findIndex((r) => r.classList.contains("plab-x-sel"));
      const next = rows[at < 0 ? (d > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + d))];
      if (next.plabSelect) next.plabSelect();
      next.scrollIntoView({ block: "nearest" });
    }

    // After the list changed: a selected pass the search hides gives way
    // to the first pass shown that changed the function (or the first shown).
    function keepSelection() {
      const shown = state.visible;
      if (!shown.length) {
        if (state.passFilter || state.hideUnchanged) {
          state.pass = -1;
          renderDiff();
        }
        return;
      }
      if (shown.some(([i]) => i === state.pass)) return;
      const first = shown.find(([, , changed]) => changed) || shown[0];
      selectPass(first[0], first[1]);
    }

    function row(i, number, mark) {
      const r = el("div", "plab-x-row plab-x-pass" + (i === state.pass ? " plab-x-sel" : ""));
      r.dataset.pass = String(number);
      r.style.paddingLeft = 4 + 12 * meta.pd[i] + "px";
      r.append(el("span", "plab-x-idx", String(number)), el("span", "plab-x-name", passLabel(i)));
      if (mark) {
        r.classList.add("plab-x-changed");
        r.append(el("span", "plab-x-num", mark));
      } else if (meta.pc[i] && state.f < 0) {
        r.classList.add("plab-x-changed");
      }
      const rs = remarksOf(i, state.f);
      if (rs.length) {
        const missed = rs.filter((x) => R.k[x] === 1).length;
        const badge = el("span", "plab-x-rk" + (missed ? " plab-x-rk1" : ""), `${rs.length} remark${rs.length === 1 ? "" : "s"}`);
        badge.title = missed ? `${missed} missed` : "";
        r.append(badge);
      }
      return r;
    }

    async function renderPasses() {
      drawing.passes = (drawing.passes || 0) + 1;
      passList.textContent = "";
      if (state.f < 0) return renderModulePasses();
      const f = state.f;
      const [name, before, after] = meta.functions[f];
      const list = passesOn(f);
      const h = await history(f);
      const sizes = new Map();
      if (h) {
        let b = before;
        for (const v of h.v) {
          sizes.set(v[0], v[2] ? "deleted" : `${b} → ${v[1]}`);
          b = v[1];
        }
      } else {
        for (let i = 0; i < N; i++) for (const g of meta.cb[i]) if (g === f) sizes.set(i, "changed");
      }
      const ran = list.filter((i) => reaches(i, f)).length;
      passHead.textContent = `${name}: ${ran} passes ran on it, ${meta.functions[f][3]} changed it; ${before} → ${after} instructions`;
      // With the toggle: the passes that changed f and those above them.
      let keep = null;
      if (state.hideUnchanged) {
        keep = new Set();
        for (const i of sizes.keys()) {
          let u = i;
          while (u >= 0 && !keep.has(u)) {
            keep.add(u);
            u = meta.pp[u];
          }
        }
      }
      const match = passMatcher(state.passFilter);
      const shown = [];
      list.forEach((i, k) => {
        if (match ? match(i) && (!state.hideUnchanged || sizes.has(i)) : !keep || keep.has(i)) shown.push([i, k + 1, sizes.has(i)]);
      });
      state.visible = shown;
      passCount.textContent = match || keep ? `${shown.length} of ${list.length} passes` : `${list.length} passes`;
      if (!shown.length) noneMatch(list, state.hideUnchanged, name);
      inSteps("passes", passList, shown.length, (k) => {
        const [i, number] = shown[k];
        const r = row(i, number, sizes.get(i));
        r.plabSelect = () => selectPass(i, number);
        r.addEventListener("click", r.plabSelect);
        passList.append(r);
      });
    }

    // The whole module: the outermost passes; a pass opens to the passes it ran.
    function renderModulePasses() {
      passHead.textContent = `${meta.module}: ${N} pass executions; open a pass to see the passes it ran`;
      // A search lists the pass executions it keeps, at any depth.
      const match = passMatcher(state.passFilter);
      if (match) {
        const shown = [];
        for (let i = 0; i < N; i++) if (match(i) && (!state.hideUnchanged || meta.pc[i])) shown.push([i, i + 1, meta.pc[i]]);
        state.visible = shown;
        passCount.textContent = `${shown.length} of ${N} passes`;
        if (!shown.length) noneMatch([...Array(N).keys()], state.hideUnchanged, meta.module);
        inSteps("passes", passList, shown.length, (k) => {
          const [i] = shown[k];
          const r = row(i, i + 1, meta.cb[i].length ? `${meta.cb[i].length} fn` : "");
          r.plabSelect = () => selectPass(i, i + 1);
          r.addEventListener("click", r.plabSelect);
          passList.append(r);
        });
        return;
      }
      passCount.textContent = state.hideUnchanged ? `${meta.pc.filter((c) => c).length} of ${N} passes` : `${N} passes`;
      state.visible = [];
      const children = new Map();
      for (let i = 0; i < N; i++) {
        const p = meta.pp[i];
        if (!children.has(p)) children.set(p, []);
        children.get(p).push(i);
      }
      function add(container, parent) {
        const kids = children.get(parent) || [];
        const shown = state.hideUnchanged ? kids.filter((i) => meta.pc[i]) : kids;
        const frag = document.createDocumentFragment();
        for (const i of shown.slice(0, 2000)) {
          const r = row(i, i + 1, meta.cb[i].length ? `${meta.cb[i].length} fn` : "");
          r.plabSelect = () => selectPass(i, i + 1);
          state.visible.push([i, i + 1, meta.pc[i]]);
          const sub = el("div", "plab-x-sub");
          if (children.has(i)) {
            r.classList.add("plab-x-open");
            r.addEventListener("click", () => {
              if (sub.childElementCount) sub.textContent = "";
              else add(sub, i);
              selectPass(i, i + 1);
            });
          } else {
            r.addEventListener("click", () => selectPass(i, i + 1));
          }
          frag.append(r, sub);
        }
        if (shown.length > 2000) frag.append(el("div", "plab-x-more", `… ${shown.length - 2000} more`));
        container.append(frag);
      }
      add(passList, -1);
      passList.dataset.complete = "1";
    }

    // ---- the diff
    const diffHead = el("div", "plab-x-summary");
    const remarkView = el("div", "plab-x-remarks");
    const diffView = el("div", "plab-x-code");
    diffPane.append(diffHead, toggle("side by side", "sideBySide", renderDiff), toggle("whole function", "whole", renderDiff));
    if (R.x.length) {
      diffPane.append(toggle("only missed remarks", "onlyMissed", () => {
        renderPasses().then(() => selectPass(state.pass, state.number));
      }));
    }
    diffPane.append(remarkView, diffView);

    // The selected pass's remarks on the selected function (or on all).
    function renderRemarks() {
      remarkView.textContent = "";
      const i = state.pass;
      if (i < 0 || !R.x.length) return;
      const rs = remarksOf(i, state.f);
      const all = remarksOf(i, -1).length;
      if (!rs.length) {
        if (all && state.f >= 0) remarkView.append(el("div", "plab-x-note", `this pass made ${all} remark${all === 1 ? "" : "s"} on other functions`));
        return;
      }
      const on = state.f < 0 ? "" : ` on ${meta.functions[state.f][0]}`;
      remarkView.append(el("div", "plab-x-rtitle", `${rs.length} remark${rs.length === 1 ? "" : "s"} of this pass${on}${state.onlyMissed ? " (missed only)" : ""}`));
      for (const r of rs.slice(0, 300)) {
        const row = el("div", `plab-x-rrow plab-x-rb${R.k[r]}`);
        row.append(el("span", `plab-x-rkind plab-x-rk${R.k[r]}`, KINDS[R.k[r]]));
        if (state.f < 0 && R.f[r] >= 0) row.append(el("span", "plab-x-rfn", meta.functions[R.f[r]][0] + ":"));
        row.append(document.createTextNode(" " + R.s[R.m[r]]));
        if (R.l[r]) row.append(el("span", "plab-x-rloc", ` line ${R.l[r]}${R.c[r] ? ":" + R.c[r] : ""}`));
        remarkView.append(row);
      }
      if (rs.length > 300) remarkView.append(el("div", "plab-x-more", `… ${rs.length - 300} more`));
    }

    async function renderDiff() {
      drawing.diff = (drawing.diff || 0) + 1;
      diffView.textContent = "";
      renderRemarks();
      const i = state.pass;
      if (i < 0) {
        diffHead.textContent = !state.visible.length && (state.passFilter || state.hideUnchanged) ? "no pass shown: change the search" : "select a pass";
        return;
      }
      if (state.f < 0) {
        const fns = meta.cb[i];
        diffHead.textContent = `${passLabel(i)}: ${fns.length ? `changed ${fns.length} functions` : "changed no function"}`;
        for (const g of fns.slice(0, 500)) {
          const r = el("div", "plab-x-row", meta.functions[g][0]);
          r.addEventListener("click", () => selectFunction(g, i));
          diffView.append(r);
        }
        return;
      }
      const f = state.f;
      const h = await history(f);
      const name = meta.functions[f][0];
      if (!h) {
        diffHead.textContent = `${name}'s diffs were left out of this page: :explore ${name} ${state.number} shows this one`;
        return;
      }
      const k = h.byPass.get(i);
      if (k === undefined) {
        diffHead.textContent = `${state.number}. ${passLabel(i)} did not change ${name}`;
        return;
      }
      const v = h.v[k];
      diffHead.textContent = `${state.number}. ${passLabel(i)} on ${name}: ` + (v[2] ? "deleted it" : `${k === 0 ? meta.functions[f][1] : h.v[k - 1][1]} → ${v[1]} instructions`);
      // Lines that only renumber values are unchanged lines: their text
      // before the pass on the left, after it on the right.
      const old = textAt(h, k);
      // The text after the pass too (checked when it is the last).
      textAt(h, k + 1);
      const renumbered = renumberLines(old, v[4]);
      const rows = [];
      let o = 0;
      let n = 0;
      const edits = v[3];
      const same = () => {
        o++;
        rows.push([" ", old[o - 1], o, ++n, renumbered[o - 1]]);
      };
      for (let j = 0; j < edits.length; j += 3) {
        for (let q = 0; q < edits[j]; q++) same();
        const del = [];
        for (let q = 0; q < edits[j + 1]; q++) del.push([lineText(old[o++]), o]);
        const ins = splitLines(edits[j + 2]).map((l) => [lineText(l), ++n]);
        rows.push(["±", del, ins]);
      }
      while (o < old.length) same();
      const table = el("table", "plab-x-diffrows" + (state.sideBySide ? " plab-x-sbs" : ""));
      const sourceColour = new Map();
      if (state.sideBySide) {
        const cols = el("colgroup");
        for (const w of ["3.5em", "", "3.5em", ""]) {
          const c = el("col");
          if (w) c.style.width = w;
          cols.append(c);
        }
        table.append(cols);
      }
      const tbody = el("tbody");
      table.append(tbody);
      const code = (text) => {
        const c = el("td", "plab-x-line");
        c.innerHTML = highlightLine(text);
        return c;
      };
      const numCell = (x) => el("td", "plab-x-ln", x === null ? "" : String(x));
      // A line's source line (with -g, passlab ends each instruction line
      // in `; line N`, or `; FILE:N` for another file's): the number cells
      // take its colour, as :asm colours assembly; hovering a row outlines
      // every row from the same source line.
      const sourceOf = (cell, text) => {
        const m = SOURCE_LINE.exec(text);
        if (!m) return;
        const key = m[1];
        if (!sourceColour.has(key)) sourceColour.set(key, sourceColour.size);
        cell.classList.add("plab-x-s" + (sourceColour.get(key) % SOURCE_COLOURS));
        cell.dataset.s = key;
        cell.title = key;
      };
      const emit = (kind, left, right) => {
        const tr = el("tr", kind === "-" ? "plab-x-del" : kind === "+" ? "plab-x-ins" : "");
        if (state.sideBySide) {
          tr.className = "";
          const l = left ? [numCell(left[1]), code(left[0])] : [numCell(null), el("td", "plab-x-line plab-x-empty")];
          const r = right ? [numCell(right[1]), code(right[0])] : [numCell(null), el("td", "plab-x-line plab-x-empty")];
          if (left && kind !== " ") l[1].classList.add("plab-x-delcell");
          if (right && kind !== " ") r[1].classList.add("plab-x-inscell");
          if (left) sourceOf(l[0], left[0]);
          if (right) sourceOf(r[0], right[0]);
          tr.append(...l, ...r);
        } else {
          const text = kind === "-" ? left[0] : right[0];
          const c = code(text);
          const nums = [numCell(kind === "+" ? null : left[1]), numCell(kind === "-" ? null : right ? right[1] : null)];
          for (const n of nums) sourceOf(n, text);
          tr.append(...nums, el("td", "plab-x-mark", kind), c);
        }
        tbody.append(tr);
      };
      const skip = (count) => {
        const tr = el("tr", "plab-x-skip");
        const td = el("td", "", `⋯ ${count} unchanged lines`);
        td.colSpan = 4;
        tr.append(td);
        tbody.append(tr);
      };
      // Which unchanged lines to show: near a change, or all.
      const near = new Uint8Array(rows.length);
      rows.forEach((r, idx) => {
        if (r[0] === "±") for (let d = -CONTEXT; d <= CONTEXT; d++) if (idx + d >= 0 && idx + d < rows.length) near[idx + d] = 1;
      });
      // What to draw, in order; drawn in steps (a pass that rewrote a
      // function of thousands of lines shows its first rows at once).
      const ops = [];
      let skipped = 0;
      for (let idx = 0; idx < rows.length; idx++) {
        const r = rows[idx];
        if (r[0] === " ") {
          if (!state.whole && !near[idx]) {
            skipped++;
            continue;
          }
          if (skipped) {
            const n = skipped;
            ops.push(() => skip(n));
          }
          skipped = 0;
          ops.push(() => emit(" ", [lineText(r[1]), r[2]], [lineText(r[4]), r[3]]));
          continue;
        }
        if (skipped) {
          const n = skipped;
          ops.push(() => skip(n));
        }
        skipped = 0;
        const [, del, ins] = r;
        if (state.sideBySide) {
          for (let q = 0; q < Math.max(del.length, ins.length); q++) ops.push(() => emit("±", del[q], ins[q]));
        } else {
          for (const d of del) ops.push(() => emit("-", d, null));
          for (const a of ins) ops.push(() => emit("+", null, a));
        }
      }
      if (skipped) {
        const n = skipped;
        ops.push(() => skip(n));
      }
      let hot = [];
      const cool = () => {
        for (const c of hot) c.classList.remove("plab-x-hot");
        hot = [];
      };
      table.addEventListener("mouseover", (e) => {
        const tr = e.target.closest("tr");
        cool();
        if (!tr) return;
        const keys = new Set([...tr.querySelectorAll("td[data-s]")].map((c) => c.dataset.s));
        for (const c of table.querySelectorAll("td[data-s]")) {
          if (keys.has(c.dataset.s)) {
            c.classList.add("plab-x-hot");
            hot.push(c);
          }
        }
      });
      table.addEventListener("mouseleave", cool);
      diffView.append(table);
      inSteps("diff", table, ops.length, (j) => ops[j]());
    }

    function selectFunction(f, pass) {
      state.f = f;
      state.pass = -1;
      markFunction(f);
      renderPasses().then(() => {
        if (pass !== undefined && f >= 0) {
          const number = passesOn(f).indexOf(pass) + 1;
          if (number > 0) selectPass(pass, number);
        } else if (state.passFilter && state.visible.length) {
          keepSelection();
        } else if (f >= 0 && data.blobs[f]) {
          // The first pass that changed it.
          history(f).then((h) => {
            if (h && h.v.length) selectPass(h.v[0][0], passesOn(f).indexOf(h.v[0][0]) + 1);
          });
        } else {
          renderDiff();
        }
      });
    }

    function selectPass(i, number) {
      state.pass = i;
      state.number = number;
      for (const r of passList.querySelectorAll(".plab-x-sel")) r.classList.remove("plab-x-sel");
      for (const r of passList.querySelectorAll(`.plab-x-pass[data-pass="${number}"]`)) r.classList.add("plab-x-sel");
      renderDiff();
    }

    renderFunctions();
    if (meta.select) {
      const [f, n] = meta.select;
      if (n) {
        state.f = f;
        renderFunctions();
        await renderPasses();
        const list = passesOn(f);
        if (n >= 1 && n <= list.length) selectPass(list[n - 1], n);
      } else {
        selectFunction(f);
      }
    } else {
      const first = order.find((i) => data.blobs[i]);
      selectFunction(first === undefined ? -1 : first);
    }
    root.dataset.ready = "1";
  }

  start().catch((e) => {
    root.textContent = "The explorer could not start: " + e;
  });
}
