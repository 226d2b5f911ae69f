/* ragjudge report: tabs, theme, and the task list (filtered, sorted, paged: only one page of rows is in the
   DOM) with each task's detail rendered on demand from the data in the page. No network, no library. */
"use strict";
(function () {
  const PAGE = 50;
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  /** h("div", {class: "x", text: "y"}, child...): an element; text always goes in as text, never as HTML. */
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  const fmt = (v) => (v === null || v === undefined ? "–" : typeof v === "number" ?
    (Number.isInteger(v) ? String(v) : v.toFixed(3)) : String(v));
  const signed = (v) => (v === null || v === undefined ? "–" : (v > 0 ? "+" : v < 0 ? "−" : "±") + Math.abs(v).toFixed(3));

  // -- theme -----------------------------------------------------------------------------------------
  const THEMES = ["auto", "light", "dark"];
  function setTheme(name) {
    if (name === "auto") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = name;
    const button = $("#theme");
    button.querySelector("span").textContent = name;
    button.setAttribute("aria-label", "Colour theme: " + (name === "auto" ? "follows the system" : name) +
      " (press to change)");
    try { localStorage.setItem("ragjudge-report-theme", name); } catch (e) { /* file pages may refuse storage */ }
  }
  let stored = "auto";
  try { stored = localStorage.getItem("ragjudge-report-theme") || "auto"; } catch (e) { stored = "auto"; }
  setTheme(THEMES.includes(stored) ? stored : "auto");
  $("#theme").addEventListener("click", () => {
    const now = document.documentElement.dataset.theme || "auto";
    setTheme(THEMES[(THEMES.indexOf(now) + 1) % THEMES.length]);
  });

  // -- tabs (WAI-ARIA tabs: arrow keys move between tabs, Tab goes into the panel) --------------------
  const tabs = $$('[role="tab"]');
  function selectTab(tab, focus) {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (focus) tab.focus();
  }
  for (const tab of tabs) {
    tab.addEventListener("click", () => {
      selectTab(tab, false);
      history.replaceState(null, "", "#" + tab.id.replace("tab-", ""));
    });
    tab.addEventListener("keydown", (e) => {
      const i = tabs.indexOf(tab);
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      const next = tabs[(to + tabs.length) % tabs.length];
      selectTab(next, true);
      history.replaceState(null, "", "#" + next.id.replace("tab-", ""));
    });
  }
  selectTab(tabs[0], false);
  const tabNamed = (name) => tabs.find((t) => t.id === "tab-" + name);

  // -- data --------------------------------------------------------------------------------------------
  async function loadData() {
    const el = document.getElementById("rj-data");
    if (el.dataset.encoding !== "gzip+base64") return JSON.parse(el.textContent);
    const bin = atob(el.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  loadData().then(start, (err) => {
    $("#status").textContent = "This browser could not read the report's task data (" + err.message +
      "); the overview, comparison and judges above do not need it.";
  });

  function start(D) {
    const T = D.T;
    const txt = (x) => (x && typeof x === "object" && "$" in x ? T[x.$] : x === null || x === undefined ? "" : String(x));
    const N = D.ids.length;
    const runs = D.runs;
    const multi = runs.length > 1;
    const byId = new Map(D.ids.map((id, i) => [id, i]));
    const metrics = D.metrics;
    const headline = metrics.map((m, i) => (m.headline ? i : -1)).filter((i) => i >= 0);
    const facetColumns = multi ? 1 : 2;  // the list shows the first facets; the detail shows them all
    const S = { q: "", facets: D.facets.map(() => ""), err: "", spread: "", flags: new Set(), metric: headline[0] ?? 0,
      min: "", max: "", run: 0, sort: "order", desc: false, page: 0, current: null };
    let shown = [];

    // filters built from the data
    const facetBox = $("#facet-filters");
    D.facets.forEach((f, k) => {
      const select = h("select", { "data-facet": k, onchange: (e) => { S.facets[k] = e.target.value; refresh(); } },
        h("option", { value: "", text: "all" }), f.values.map((v, c) => h("option", { value: String(c), text: v })));
      facetBox.append(h("label", {}, f.name.replace(/_/g, " "), select));
    });
    const flagBox = $("#flag-filters");
    D.flags.forEach((name, k) => {
      const box = h("input", { type: "checkbox", "data-flag": k, onchange: (e) => {
        if (e.target.checked) S.flags.add(k); else S.flags.delete(k); refresh(); } });
      flagBox.append(h("label", { class: "check" }, box, name));
    });
    const metricSel = $("#f-metric");
    metrics.forEach((m, i) => metricSel.append(h("option", { value: String(i), text: m.name })));
    metricSel.value = String(S.metric);
    const runSel = $("#f-run");
    runs.forEach((r, i) => runSel.append(h("option", { value: String(i), text: r.label })));
    if (!multi) $("#f-run-label").hidden = true;
    const panels = runs.some((r) => r.spread.some((v) => v !== null));
    if (!panels) $("#f-spread").closest("label").hidden = true;  // no judge panel in these runs
    const sortSel = $("#f-sort");
    function sortOptions() {
      const keep = S.sort;
      sortSel.replaceChildren(...[h("option", { value: "order", text: "file order" }), h("option", { value: "id", text: "task id" }),
        metrics.map((m, i) => h("option", { value: "m" + i, text: m.name + (multi ? " (" + runs[S.run].label + ")" : "") })),
        multi ? metrics.map((m, i) => h("option", { value: "d" + i, text: "Δ " + m.name + " (" + deltaLabel() + ")" })) : [],
        h("option", { value: "spread", text: "panel spread" }), h("option", { value: "errors", text: "errors" })].flat());
      sortSel.value = keep;
      if (sortSel.value !== keep) { S.sort = "order"; sortSel.value = "order"; }
    }
    const deltaRun = () => (S.run > 0 ? S.run : 1);
    const deltaLabel = () => runs[deltaRun()].label + " − " + runs[0].label;
    sortOptions();

    const on = (id, ev, fn) => $(id).addEventListener(ev, fn);
    let timer = null;
    on("#f-q", "input", (e) => { clearTimeout(timer); timer = setTimeout(() => { S.q = e.target.value.trim().toLowerCase(); refresh(); }, 150); });
    on("#f-err", "change", (e) => { S.err = e.target.value; refresh(); });
    on("#f-spread", "change", (e) => { S.spread = e.target.value; refresh(); });
    on("#f-metric", "change", (e) => { S.metric = Number(e.target.value); refresh(); });
    on("#f-min", "input", (e) => { S.min = e.target.value; refresh(); });
    on("#f-max", "input", (e) => { S.max = e.target.value; refresh(); });
    on("#f-run", "change", (e) => { S.run = Number(e.target.value); sortOptions(); refresh(); });
    on("#f-sort", "change", (e) => { S.sort = e.target.value; refresh(); });
    on("#f-order", "click", () => { S.desc = !S.desc; refresh(); });
    on("#f-reset", "click", () => {
      $("#filters").reset();
      Object.assign(S, { q: "", facets: D.facets.map(() => ""), err: "", spread: "", flags: new Set(), min: "", max: "",
        run: 0, sort: "order", desc: false });
      metricSel.value = String(S.metric);
      sortOptions();
      refresh();
    });
    on("#p-first", "click", () => page(0));
    on("#p-prev", "click", () => page(S.page - 1));
    on("#p-next", "click", () => page(S.page + 1));
    on("#p-last", "click", () => page(Infinity));

    // search: every word must occur in the task's texts (built on first use)
    let hay = null;
    function haystacks() {
      if (hay) return hay;
      hay = new Array(N);
      for (let i = 0; i < N; i++) {
        const parts = [D.ids[i], txt(D.titles[i])];
        const collect = (v) => {
          if (v === null || v === undefined) return;
          if (typeof v === "string") parts.push(v);
          else if (Array.isArray(v)) v.forEach(collect);
          else if (typeof v === "object") { if ("$" in v) parts.push(T[v.$]); else Object.values(v).forEach(collect); }
        };
        collect(D.shared[i]);
        runs.forEach((r) => collect(r.detail[i]));
        hay[i] = parts.join("\n").toLowerCase();
      }
      return hay;
    }

    function keep(i) {
      for (let k = 0; k < D.facets.length; k++) {
        if (S.facets[k] === "") continue;
        const code = D.facets[k].codes[i], want = Number(S.facets[k]);
        if (code === null || (Array.isArray(code) ? !code.includes(want) : code !== want)) return false;
      }
      const r = runs[S.run];
      if (S.err !== "" && (r.errors[i] === null || (S.err === "1") !== (r.errors[i] > 0))) return false;
      if (S.spread !== "" && !(r.spread[i] !== null && r.spread[i] >= Number(S.spread) - 1e-9)) return false;
      for (const f of S.flags) if (r.flags[f][i] !== 1) return false;
      if (S.min !== "" || S.max !== "") {
        const v = r.values[S.metric][i];
        if (v === null || (S.min !== "" && v < Number(S.min)) || (S.max !== "" && v > Number(S.max))) return false;
      }
      if (S.q) {
        const text = haystacks()[i];
        for (const word of S.q.split(/\s+/)) if (!text.includes(word)) return false;
      }
      return true;
    }

    function sortKey() {
      const r = runs[S.run];
      if (S.sort === "id") return (i) => D.ids[i];
      if (S.sort.startsWith("m")) { const m = Number(S.sort.slice(1)); return (i) => r.values[m][i]; }
      if (S.sort.startsWith("d")) {
        const m = Number(S.sort.slice(1)), a = runs[0].values[m], b = runs[deltaRun()].values[m];
        return (i) => (a[i] === null || b[i] === null ? null : b[i] - a[i]);
      }
      if (S.sort === "spread") return (i) => r.spread[i];
      if (S.sort === "errors") return (i) => r.errors[i];
      return null;
    }

    function refresh() {
      shown = [];
      for (let i = 0; i < N; i++) if (keep(i)) shown.push(i);
      const key = sortKey();
      if (key) {
        const dir = S.desc ? -1 : 1;
        const collator = new Intl.Collator(undefined, { numeric: true });
        shown.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === null || x === undefined) return y === null || y === undefined ? a - b : 1;  // missing values last
          if (y === null || y === undefined) return -1;
          const c = typeof x === "string" ? collator.compare(x, y) : x - y;
          return c !== 0 ? c * dir : a - b;
        });
      } else if (S.desc) shown.reverse();
      const order = $("#f-order");
      order.textContent = S.desc ? "descending ↓" : "ascending ↑";
      order.setAttribute("aria-pressed", String(S.desc));
      $("#status").textContent = shown.length + " of " + N + " tasks" + (shown.length < N ? " match the filters" : "");
      S.page = 0;
      renderTable();
    }

    function page(p) {
      const last = Math.max(0, Math.ceil(shown.length / PAGE) - 1);
      S.page = Math.max(0, Math.min(p, last));
      renderTable();
    }

    // columns: [header, cell(i), sort value or null]
    function columns() {
      const cols = [["task", null, "id"], ["question", null, null]];
      D.facets.slice(0, facetColumns).forEach((f, k) => cols.push([f.name.replace(/_/g, " "), (i) => facetText(k, i), null]));
      if (!multi) {  // the headline metrics, and whichever metric the list is sorted or filtered by
        const shownMetrics = headline.length ? headline.slice() : metrics.map((_, i) => i).slice(0, 4);
        const sorted = S.sort.startsWith("m") ? Number(S.sort.slice(1)) : null;
        if (sorted !== null && !shownMetrics.includes(sorted)) shownMetrics.push(sorted);
        if ((S.min !== "" || S.max !== "") && !shownMetrics.includes(S.metric)) shownMetrics.push(S.metric);
        shownMetrics.forEach((m) => cols.push([metrics[m].name, (i) => fmt(runs[0].values[m][i]), "m" + m]));
      } else {
        const m = S.metric;  // the caption names the metric; headers stay short
        runs.forEach((r, k) => cols.push([r.label, (i) => fmt(r.values[m][i]), k === S.run ? "m" + m : null]));
        cols.push(["Δ", (i) => {
          const a = runs[0].values[m][i], b = runs[deltaRun()].values[m][i];
          return a === null || b === null ? "–" : signed(b - a);
        }, "d" + m]);
      }
      if (panels) cols.push(["spread", (i) => fmt(runs[S.run].spread[i]), "spread"]);
      cols.push(["errors", (i) => runs.map((r) => (r.errors[i] === null ? "–" : r.errors[i])).join(" / "), "errors"]);
      return cols;
    }

    function facetText(k, i) {
      const code = D.facets[k].codes[i];
      if (code === null) return "";
      return (Array.isArray(code) ? code : [code]).map((c) => D.facets[k].values[c]).join(", ");
    }

    function renderTable() {
      const cols = columns();
      const table = $("#task-table");
      table.caption.textContent = multi ? metrics[S.metric].name + " of each run (choose with Metric); Δ = " +
        deltaLabel() : "";
      table.tHead.replaceChildren(h("tr", {}, cols.map(([name, , sortBy], c) => {
        const active = sortBy && S.sort === sortBy;
        const th = h("th", { scope: "col", "aria-sort": active ? (S.desc ? "descending" : "ascending") : null });
        if (sortBy) th.append(h("button", { type: "button", title: "Sort by " + name, onclick: () => {
          if (S.sort === sortBy) S.desc = !S.desc; else { S.sort = sortBy; S.desc = sortBy !== "id"; }
          sortSel.value = S.sort; refresh(); $$("#task-table thead th")[c]?.querySelector("button")?.focus();
        } }, name + (active ? (S.desc ? " ↓" : " ↑") : "")));
        else th.textContent = name;
        return th;
      })));
      const start = S.page * PAGE;
      const rows = shown.slice(start, start + PAGE).map((i) => h("tr", { "aria-current": i === S.current ? "true" : null },
        cols.map(([name, cell], c) => {
          if (c === 0) return h("th", { scope: "row" }, h("button", { type: "button", class: "link", "data-index": i,
            onclick: () => openTask(i, true) }, D.ids[i]));
          if (c === 1) return h("td", { class: "title", title: txt(D.titles[i]) }, txt(D.titles[i]));
          const isFacet = c < 2 + Math.min(facetColumns, D.facets.length);
          return h("td", { class: isFacet ? "facet" : null }, cell(i));
        })));
      table.tBodies[0].replaceChildren(...rows);
      const pages = Math.max(1, Math.ceil(shown.length / PAGE));
      $("#p-info").textContent = shown.length ? "tasks " + (start + 1) + "–" + Math.min(start + PAGE, shown.length) +
        " of " + shown.length + " · page " + (S.page + 1) + " of " + pages : "no task matches";
      $("#p-first").disabled = $("#p-prev").disabled = S.page === 0;
      $("#p-next").disabled = $("#p-last").disabled = S.page >= pages - 1;
    }

    // -- detail ----------------------------------------------------------------------------------------
    const blocks = {
      conversation: (b) => h("ol", { class: "conv" }, b.turns.map((t) => h("li", { class: [t.speaker, t.current ? "current" : ""].join(" "),
        "aria-current": t.current ? "step" : null }, h("span", { class: "who" }, t.speaker + (t.current ? " · question under evaluation" : "")), txt(t.text)))),
      passages: (b) => [b.note ? h("p", { class: "note" }, txt(b.note)) : null, b.items.map((p) => h("details", {},
        h("summary", {}, (p.mark ? p.mark.split(", ") : []).map((m) => h("span", { class: "mark mark-" + m }, m)),
          (txt(p.title) || "untitled") + " · " + txt(p.id) + (p.score !== null && p.score !== undefined ? " · score " + fmt(p.score) : "")),
        h("div", { class: "text" }, txt(p.text))))],
      text: (b) => h("div", { class: "text" }, txt(b.text)),
      metrics: (b) => h("table", { class: "num" }, h("tbody", {}, b.items.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, fmt(v)))))),
      fields: (b) => h("table", { class: "kv" }, h("tbody", {}, b.items.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, txt(k)), h("td", {}, txt(v)))))),
      errors: (b) => h("ul", { class: "errors" }, b.items.map(([k, v]) => h("li", {}, txt(k) + ": " + txt(v)))),
      judges: (b) => b.items.map((j) => judge(j, false)),
    };

    /** A label worth showing: not the value again (RB_alg's "0.7400" for 0.74). */
    function labelAdds(j) {
      if (j.label === undefined || j.label === null || j.label === "") return false;
      const n = Number(txt(j.label));
      return !(typeof j.value === "number" && Number.isFinite(n) && Math.abs(n - j.value) < 5e-4);
    }

    function judge(j, member) {
      const rationale = txt(j.rationale), raw = txt(j.raw);
      const tokens = j.prompt_tokens || j.completion_tokens ? (j.prompt_tokens || 0) + " + " + (j.completion_tokens || 0) + " tokens" : null;
      const meta = [j.model && !member ? txt(j.model) : null, tokens, j.latency ? j.latency.toFixed(2) + " s" : null].filter(Boolean).join(" · ");
      return h("div", { class: "judge" },
        h(member ? "h5" : "h4", {}, h("span", {}, txt(j.name) + (j.metric && j.metric !== j.name ? " · " + txt(j.metric) : "")),
          h("span", { class: "val" }, j.value === undefined ? "no value" : fmt(j.value)),
          labelAdds(j) ? h("span", { class: "meta" }, "label " + txt(j.label)) : null,
          meta ? h("span", { class: "meta" }, meta) : null),
        j.error ? h("div", { class: "error", role: "note" }, "error: " + txt(j.error)) : null,
        rationale && !j.members ? h("div", { class: "rationale" }, rationale) : null,
        raw && raw !== rationale ? h("details", {}, h("summary", {}, "raw output"), h("pre", {}, raw)) : null,
        j.details ? h("details", {}, h("summary", {}, "details"), h("pre", {}, txt(j.details))) : null,
        j.members ? h("details", { open: true }, h("summary", {}, "panel: " + j.members.length + " members"),
          j.members.map((m) => judge(m, true))) : null);
    }

    function renderBlock(b) {
      const draw = blocks[b.kind];
      return h("section", { class: "block block-" + b.kind }, h("h4", {}, txt(b.title)), draw ? draw(b) : h("pre", {}, JSON.stringify(b)));
    }

    function openTask(i, focus) {
      S.current = i;
      selectTab(tabNamed("tasks"), false);
      history.replaceState(null, "", "#task=" + encodeURIComponent(D.ids[i]));
      const pos = shown.indexOf(i);
      const present = runs.map((r, k) => [r, k]).filter(([r]) => r.detail[i] !== null);
      const detail = $("#detail");
      const nav = h("div", { class: "nav" },
        h("button", { type: "button", disabled: pos <= 0, onclick: () => openTask(shown[pos - 1], true), "aria-label": "Previous task" }, "‹ previous"),
        h("button", { type: "button", disabled: pos < 0 || pos >= shown.length - 1, onclick: () => openTask(shown[pos + 1], true), "aria-label": "Next task" }, "next ›"));
      const chips = h("div", { class: "chips" }, D.facets.map((f, k) => facetText(k, i) ? h("span", { class: "chip" }, f.name.replace(/_/g, " ") + ": " + facetText(k, i)) : null),
        present.map(([r]) => r.errors[i] ? h("span", { class: "chip bad" }, (multi ? r.label + ": " : "") + r.errors[i] + " error" + (r.errors[i] > 1 ? "s" : "")) : null));
      const columns = h("div", { class: "runs", style: "grid-template-columns: repeat(" + present.length + ", minmax(0, 1fr))" },
        present.map(([r, k]) => h("div", { class: "run-col r" + (k % 8) }, multi ? h("h3", {}, r.label) : null,
          multi ? h("p", { class: "meta" }, headline.map((m) => metrics[m].name + " " + fmt(r.values[m][i])).join(" · ")) : null,
          r.detail[i].map(renderBlock))));
      detail.replaceChildren(nav, h("h2", { tabindex: "-1", id: "detail-title" }, "Task " + D.ids[i]),
        h("p", {}, txt(D.titles[i])), chips, ...D.shared[i].map(renderBlock), columns);
      detail.scrollTop = 0;
      const p = shown.indexOf(i);
      if (p >= 0 && Math.floor(p / PAGE) !== S.page) S.page = Math.floor(p / PAGE);
      renderTable();
      if (focus) $("#detail-title").focus();
    }

    document.addEventListener("click", (e) => {
      const target = e.target.closest("[data-task], [data-filter]");
      if (!target || target.closest("#panel-tasks")) return;
      if (target.dataset.task !== undefined) {
        const i = byId.get(target.dataset.task);
        if (i !== undefined) { if (!shown.includes(i)) $("#f-reset").click(); openTask(i, true); }
        return;
      }
      $("#f-reset").click();
      S.run = Number(target.dataset.run || 0);
      runSel.value = String(S.run);
      sortOptions();
      if (target.dataset.filter === "spread") { S.spread = target.dataset.value; $("#f-spread").value = S.spread; S.sort = "spread"; S.desc = true; }
      if (target.dataset.filter === "errors") { S.err = "1"; $("#f-err").value = "1"; }
      if (target.dataset.filter === "flag") { S.flags.add(Number(target.dataset.value)); $$("[data-flag]")[Number(target.dataset.value)].checked = true; }
      sortSel.value = S.sort;
      refresh();
      selectTab(tabNamed("tasks"), true);
    });

    document.addEventListener("keydown", (e) => {
      if (e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
      if ($("#panel-tasks").hidden || S.current === null) return;
      const pos = shown.indexOf(S.current);
      if (e.key === "j" && pos < shown.length - 1) openTask(shown[pos + 1], true);
      if (e.key === "k" && pos > 0) openTask(shown[pos - 1], true);
    });


    // -- labelling mode (ragjudge report RUN --to-label FILE) -------------------------------------------
    if (D.label) labelling(D.label);

    function labelling(L) {
      const drawn = L.ids.map((id) => byId.get(id)).filter((i) => i !== undefined);
      const rest = [];
      for (let i = 0; i < N; i++) if (!drawn.includes(i)) rest.push(i);
      const queue = drawn.concat(rest);
      let store = {};
      try { store = JSON.parse(localStorage.getItem(L.key) || "{}"); } catch (e) { store = {}; }
      const save = () => { try { localStorage.setItem(L.key, JSON.stringify(store)); } catch (e) { /* refused */ } };
      const metricSel = $("#l-metric");
      L.metrics.forEach((m) => metricSel.append(h("option", { value: m, text: m })));
      const annotator = $("#l-annotator");
      annotator.value = store["\u0000annotator"] || "";
      annotator.addEventListener("input", () => { store["\u0000annotator"] = annotator.value; save(); });
      let metric = store["\u0000metric"] && L.metrics.includes(store["\u0000metric"]) ? store["\u0000metric"] : L.metrics[0];
      metricSel.value = metric;
      let at = 0;
      const labelOf = (i) => (store[D.ids[i]] || {})[metric];
      metricSel.addEventListener("change", () => { metric = metricSel.value; store["\u0000metric"] = metric; save(); show(); });

      function progress() {
        const done = drawn.filter((i) => labelOf(i) !== undefined).length;
        const all = Object.keys(store).filter((k) => !k.startsWith("\u0000") && store[k][metric] !== undefined).length;
        $("#label-progress").textContent = done + " of " + drawn.length + " drawn samples labelled for " + metric +
          (all > done ? " (" + all + " in all)" : "") + " · sample " + (at + 1) + " of " + queue.length;
      }

      function show() {
        const i = queue[at];
        const mIndex = metrics.findIndex((m) => m.name === metric);
        const score = mIndex >= 0 ? runs[0].values[mIndex][i] : null;
        const given = labelOf(i);
        const card = $("#label-card");
        card.replaceChildren(
          h("h3", { id: "label-title", tabindex: "-1" }, (at < drawn.length ? "Drawn sample " : "Sample ") + D.ids[i]),
          h("p", {}, txt(D.titles[i])),
          h("p", { class: "judge-score" }, "judge's " + metric + ": ", h("strong", {}, fmt(score)),
            " · your label: ", h("strong", { id: "label-given" }, given === undefined ? "none yet" :
              given === true ? "pass" : given === false ? "fail" : String(given))),
          ...D.shared[i].map(renderBlock),
          ...(runs[0].detail[i] || []).map(renderBlock));
        progress();
      }

      function give(value) {
        const id = D.ids[queue[at]];
        store[id] = Object.assign(store[id] || {}, { [metric]: value });
        save();
        if (at < queue.length - 1) at += 1;
        show();
      }

      function download() {
        const who = annotator.value.trim();
        const lines = [];
        for (const id of D.ids) {
          const byMetric = store[id];
          if (!byMetric) continue;
          for (const m of Object.keys(byMetric)) {
            const row = { schema: L.schema, sample_id: id, metric: m, value: byMetric[m] };
            if (who) row.annotator = who;
            lines.push(JSON.stringify(row));
          }
        }
        const url = URL.createObjectURL(new Blob([lines.join("\n") + (lines.length ? "\n" : "")], { type: "application/x-ndjson" }));
        const a = h("a", { href: url, download: "labels.jsonl" });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
      }

      $("#l-download").addEventListener("click", download);
      $("#l-pass").addEventListener("click", () => give(true));
      $("#l-fail").addEventListener("click", () => give(false));
      $("#l-next").addEventListener("click", () => { at = Math.min(at + 1, queue.length - 1); show(); });
      $("#l-back").addEventListener("click", () => { at = Math.max(at - 1, 0); show(); });
      $("#l-clear").addEventListener("click", () => {
        for (const id of Object.keys(store)) if (!id.startsWith("\u0000")) delete store[id][metric];
        save(); show();
      });
      document.addEventListener("keydown", (e) => {
        if ($("#panel-label").hidden || e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
        if (e.key === "p") give(true);
        else if (e.key === "f") give(false);
        else if (/^[0-9]$/.test(e.key)) give(Number(e.key));
        else if (e.key === "n" || e.key === "ArrowDown") { at = Math.min(at + 1, queue.length - 1); show(); }
        else if (e.key === "b" || e.key === "ArrowUp") { at = Math.max(at - 1, 0); show(); }
        else if (e.key === "u") { const id = D.ids[queue[at]]; if (store[id]) delete store[id][metric]; save(); show(); }
        else return;
        e.preventDefault();
      });
      show();
    }

    refresh();
    const hash = decodeURIComponent(location.hash.slice(1));
    if (hash.startsWith("task=") && byId.has(hash.slice(5))) openTask(byId.get(hash.slice(5)), false);
    else if (hash && tabNamed(hash)) selectTab(tabNamed(hash), false);
    document.body.dataset.ready = "true";
  }
})();
