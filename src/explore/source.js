// passlab's annotated source, in the page. `root` is its element; `input`
// is {data, texts}: data (gzip, base64) holds the remarks column by column
// (k kind, p pass, f function, m message: indices into strings; fi file:
// an index into files, -1 without a line; l line; c column) and texts[i]
// (gzip, base64, or null when the file was not found) the text of file i.
// Lines are built a chunk at a time as they scroll into view; every chunk
// keeps its exact height before it is built (one row per source line and
// per remark, all of one height), so jumping to a line lands on it.
function plabRemarks(root, input, page) {
  const KINDS = ["passed", "missed", "analysis", "failure"];
  const ROW = 18;
  const CHUNK = 300;
  const HOT = 100;

  const gunzip = plabGunzip;
  const el = plabEl;

  function plural(n, word) {
    return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
  }

  async function start() {
    const d = JSON.parse(await gunzip(input.data));
    const S = d.strings;
    const N = d.k.length;
    const texts = await Promise.all(
      input.texts.map(async (t) => {
        if (t === null) return null;
        const lines = (await gunzip(t)).split("\n");
        if (lines.length && lines[lines.length - 1] === "") lines.pop();
        return lines;
      })
    );
    // How many of the hottest lines to list (`:report remarks source
    // top=N`; the "more" link adds more).
    const TOP = d.top > 0 ? d.top : HOT;
    const st = { kinds: [true, true, true, true], pass: -1, fn: "", file: -1, hot: TOP, focus: null };
    // Files as shown: without the folder all of them share.
    let common = d.files.length ? d.files[0].slice(0, d.files[0].lastIndexOf("/") + 1) : "";
    for (const f of d.files) while (common && !f.startsWith(common)) common = common.slice(0, common.slice(0, -1).lastIndexOf("/") + 1);
    const short = (fi) => d.files[fi].slice(common.length);
    let byLine = new Map(); // file -> line -> remarks
    let lineless = [];
    let shown = 0;

    // ---- counts for the filters
    const kindCount = [0, 0, 0, 0];
    const passCount = new Map();
    const fnSeen = new Set();
    for (let r = 0; r < N; r++) {
      kindCount[d.k[r]]++;
      passCount.set(d.p[r], (passCount.get(d.p[r]) || 0) + 1);
      fnSeen.add(d.f[r]);
    }

    // ---- layout
    if (page) root.classList.add("plab-r-page");
    root.textContent = "";
    const head = el("div", "plab-r-head");
    const totals = KINDS.map((k, i) => (kindCount[i] ? `${kindCount[i].toLocaleString("en-US")} ${k}` : "")).filter((x) => x);
    head.append(el("b", "", d.title), document.createTextNode(`: ${plural(N, "remark")} (${totals.join(", ")})`));
    const bar = el("div", "plab-r-bar");
    const kindBoxes = KINDS.map((k, i) => {
      const l = el("label");
      const box = el("input");
      box.type = "checkbox";
      box.checked = true;
      box.dataset.kind = k;
      box.addEventListener("change", () => {
        st.kinds[i] = box.checked;
        update();
      });
      l.append(box, document.createTextNode(" "), el("span", `plab-r-kind plab-r-k${i}`, k), document.createTextNode(` ${kindCount[i]}`));
      return l;
    });
    const passSel = el("select");
    passSel.append(new Option(`all passes (${passCount.size})`, "-1"));
    for (const [p, n] of [...passCount].sort((a, b) => b[1] - a[1])) passSel.append(new Option(`${S[p]} (${n})`, String(p)));
    passSel.addEventListener("change", () => {
      st.pass = Number(passSel.value);
      update();
    });
    const fnBox = el("input");
    fnBox.type = "text";
    fnBox.placeholder = "function";
    const listId = root.id + "-fns";
    fnBox.setAttribute("list", listId);
    const fnList = el("datalist");
    fnList.id = listId;
    for (const f of [...fnSeen].map((i) => S[i]).sort().slice(0, 20000)) fnList.append(new Option(f));
    let typing = 0;
    fnBox.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        st.fn = fnBox.value.trim();
        update();
      }, 200);
    });
    const status = el("span", "plab-r-note");
    bar.append(...kindBoxes, passSel, fnBox, fnList, status);

    const panes = el("div", "plab-r-panes");
    const hotPane = el("div", "plab-r-hot");
    const srcPane = el("div", "plab-r-src");
    panes.append(hotPane, srcPane);
    root.append(head, bar, panes);

    // ---- which remarks the filters keep, by line
    function keeps(r) {
      if (!st.kinds[d.k[r]]) return false;
      if (st.pass >= 0 && d.p[r] !== st.pass) return false;
      // A function whose name contains what was typed (case aside).
      if (st.fn && !S[d.f[r]].toLowerCase().includes(st.fn.toLowerCase())) return false;
      return true;
    }

    function recompute() {
      byLine = new Map();
      lineless = [];
      shown = 0;
      for (let r = 0; r < N; r++) {
        if (!keeps(r)) continue;
        shown++;
        const fi = d.fi[r];
        if (fi < 0) {
          lineless.push(r);
          continue;
        }
        let m = byLine.get(fi);
        if (!m) byLine.set(fi, (m = new Map()));
        let a = m.get(d.l[r]);
        if (!a) m.set(d.l[r], (a = []));
        a.push(r);
      }
      // Each line's remarks by column; the same remark made again (a pass
      // that ran several times, a macro's many loads) is one row, counted.
      for (const m of byLine.values()) {
        for (const [line, a] of m) {
          a.sort((x, y) => d.c[x] - d.c[y] || d.k[x] - d.k[y] || d.p[x] - d.p[y] || d.m[x] - d.m[y] || d.f[x] - d.f[y]);
          const rows = [];
          for (const r of a) {
            const last = rows[rows.length - 1];
            if (last && d.c[last[0]] === d.c[r] && d.k[last[0]] === d.k[r] && d.p[last[0]] === d.p[r] && d.m[last[0]] === d.m[r] && d.f[last[0]] === d.f[r]) last[1]++;
            else rows.push([r, 1]);
          }
          rows.all = a;
          m.set(line, rows);
        }
      }
    }

    // Counts by kind of a line's rows ([remark, times] each).
    function countsOf(rows) {
      const c = [0, 0, 0, 0];
      for (const [r, n] of rows) c[d.k[r]] += n;
      const e = el("span", "plab-r-counts");
      c.forEach((n, i) => {
        if (n) e.append(el("span", `plab-r-c${i}`, `${n} ${KINDS[i]}`));
      });
      return e;
    }

    function remarkRow(r, times) {
      const row = el("div", `plab-r-rm plab-r-b${d.k[r]}`);
      row.append(
        el("span", `plab-r-kind plab-r-k${d.k[r]}`, KINDS[d.k[r]]),
        el("span", "plab-r-pass", S[d.p[r]]),
        el("span", "plab-r-fn", `in ${S[d.f[r]]}${d.c[r] ? ` col ${d.c[r]}` : ""}:`),
        document.createTextNode(S[d.m[r]])
      );
      if (times > 1) row.append(el("span", "plab-r-times", ` ×${times}`));
      row.title = S[d.m[r]];
      return row;
    }

    // ---- the hottest lines, and the remarks without one
    function renderHot() {
      hotPane.textContent = "";
      const all = [];
      for (const [fi, m] of byLine) for (const [line, rows] of m) all.push([fi, line, rows]);
      all.sort((a, b) => b[2].all.length - a[2].all.length || a[0] - b[0] || a[1] - b[1]);
      hotPane.append(el("div", "plab-r-title", `${plural(all.length, "line")} with remarks, the most remarked first`));
      const frag = document.createDocumentFragment();
      for (const [fi, line, rs] of all.slice(0, st.hot)) {
        const item = el("div", "plab-r-item");
        item.dataset.file = short(fi);
        item.dataset.line = String(line);
        item.append(el("b", "", `${short(fi)}:${line}`), document.createTextNode(" "), countsOf(rs));
        const text = texts[fi] && texts[fi][line - 1];
        if (text !== undefined && text !== null) item.append(el("code", "", text.trim()));
        item.addEventListener("click", () => jump(fi, line));
        frag.append(item);
      }
      hotPane.append(frag);
      if (all.length > st.hot) {
        const more = el("div", "plab-r-more", `… ${plural(all.length - st.hot, "more line")}: show ${Math.min(HOT * 5, all.length - st.hot)} more`);
        more.addEventListener("click", () => {
          st.hot += HOT * 5;
          renderHot();
        });
        hotPane.append(more);
      }
      if (lineless.length) {
        const noDebug = byLine.size === 0 && d.fi.every((x) => x < 0);
        hotPane.append(
          el("div", "plab-r-title", `${plural(lineless.length, "remark")} without a source line`),
          el("div", "plab-r-note", noDebug ? "the module has no debug info (load it with cflags=-g)" : "their passes gave none")
        );
        const byFn = new Map();
        for (const r of lineless) {
          if (!byFn.has(d.f[r])) byFn.set(d.f[r], []);
          byFn.get(d.f[r]).push([r, 1]);
        }
        for (const [f, rows] of [...byFn].sort((a, b) => b[1].length - a[1].length).slice(0, 200)) {
          const item = el("div", "plab-r-item");
          item.append(el("b", "", S[f]), document.createTextNode(" "), countsOf(rows));
          const open = el("div");
          item.addEventListener("click", () => {
            if (open.childElementCount) open.textContent = "";
            else for (const [r] of rows.slice(0, 500)) open.append(remarkRow(r, 1));
          });
          hotPane.append(item, open);
        }
      }
    }

    // ---- the source, a chunk at a time
    const srcTitle = el("div", "plab-r-title");
    const srcBody = el("div");
    srcPane.append(srcTitle, srcBody);
    let chunks = [];
    const observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) if (e.isIntersecting) fill(e.target);
      },
      { root: srcPane, rootMargin: "1200px 0px" }
    );

    function renderSource() {
      observer.disconnect();
      srcBody.textContent = "";
      srcTitle.textContent = "";
      chunks = [];
      const files = [...byLine.keys()].sort((a, b) => byLine.get(b).size - byLine.get(a).size || a - b);
      if (!files.length) {
        srcTitle.textContent = "no source lines with remarks under these filters";
        return;
      }
      if (!byLine.has(st.file)) st.file = files[0];
      const sel = el("select");
      for (const fi of files) sel.append(new Option(`${d.files[fi]} (${plural(byLine.get(fi).size, "line")} with remarks)`, String(fi)));
      sel.value = String(st.file);
      sel.addEventListener("change", () => {
        st.file = Number(sel.value);
        renderSource();
      });
      srcTitle.append(sel);
      const fi = st.file;
      const m = byLine.get(fi);
      const lines = texts[fi];
      if (!lines) srcTitle.append(el("span", "plab-r-note", " (the file was not found: lines without their text)"));
      let last = lines ? lines.length : 0;
      for (const ln of m.keys()) if (ln > last) last = ln;
      for (let s = 1; s <= last; s += CHUNK) {
        const e = Math.min(last, s + CHUNK - 1);
        let rows = e - s + 1;
        for (let ln = s; ln <= e; ln++) {
          const a = m.get(ln);
          if (a) rows += a.length;
        }
        const div = el("div", "plab-r-chunk");
        div.style.height = rows * ROW + "px";
        div.dataset.start = String(s);
        div.dataset.end = String(e);
        srcBody.append(div);
        chunks.push(div);
        observer.observe(div);
      }
    }

    function fill(div) {
      if (div.dataset.filled) return;
      div.dataset.filled = "1";
      const m = byLine.get(st.file);
      const lines = texts[st.file];
      const frag = document.createDocumentFragment();
      for (let ln = Number(div.dataset.start); ln <= Number(div.dataset.end); ln++) {
        const row = el("div", "plab-r-ln");
        row.dataset.line = String(ln);
        row.append(el("span", "plab-r-num", String(ln)), document.createTextNode(lines ? lines[ln - 1] : ""));
        frag.append(row);
        const a = m.get(ln);
        if (a) {
          row.classList.add("plab-r-has");
          for (const [r, n] of a) frag.append(remarkRow(r, n));
        }
      }
      div.append(frag);
    }

    function jump(fi, line) {
      if (st.file !== fi) {
        st.file = fi;
        renderSource();
      }
      st.focus = [fi, line];
      const chunk = chunks[Math.floor((line - 1) / CHUNK)];
      if (!chunk) return;
      fill(chunk);
      const row = chunk.querySelector(`[data-line="${line}"]`);
      if (!row) return;
      srcPane.scrollTop = row.offsetTop - srcTitle.offsetHeight - 3 * ROW;
      for (const old of srcPane.querySelectorAll(".plab-r-flash")) old.classList.remove("plab-r-flash");
      row.classList.add("plab-r-flash");
    }

    function update() {
      recompute();
      status.textContent = shown === N ? "" : `showing ${plural(shown, "remark")} of ${N.toLocaleString("en-US")}`;
      st.hot = TOP;
      renderHot();
      renderSource();
      // The line looked at last stays in view; otherwise the file's top.
      if (st.focus && st.focus[0] === st.file) jump(st.focus[0], st.focus[1]);
      else srcPane.scrollTop = 0;
    }

    update();
    root.dataset.ready = "1";
  }

  start().catch((e) => {
    root.textContent = "The annotated source could not start: " + e;
  });
}
