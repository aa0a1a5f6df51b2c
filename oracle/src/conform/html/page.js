// Renders the conformance page from the JSON in #results: the summary counts, the
// sections and rules tables (replacing the server-rendered rows with the same data plus
// data-js-total, so a test can tell the script ran), the file list with its filters, and
// the details drawer. Plain DOM, no libraries: the page must work offline from a file.
(function () {
  "use strict";
  var root = document.documentElement;
  var R;
  var SEGMENTS = ["pass", "fail", "expected-fail", "skip"];
  var FIELD = { pass: "pass", fail: "fail", skip: "skip", "expected-fail": "expected_fail" };
  var SEVERITY = { fail: 0, "expected-fail": 1, skip: 2, pass: 3 };
  var indexOf = {};
  var filesOf = {};
  var built = {};
  var filter = { text: "", verdict: "all" };

  function h(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        e.setAttribute(k, v === true ? "" : String(v));
      });
    }
    add(e, kids);
    return e;
  }

  function add(e, kids) {
    if (kids === null || kids === undefined) return;
    if (Array.isArray(kids)) kids.forEach(function (k) { add(e, k); });
    else if (typeof kids === "string" || typeof kids === "number") e.appendChild(document.createTextNode(String(kids)));
    else e.appendChild(kids);
  }

  function count(c, v) { return c[FIELD[v]]; }
  function total(c) { return c.pass + c.fail + c.skip + c.expected_fail; }
  function label(v) { return v.replace("-", " "); }

  function rate(c) {
    var t = total(c);
    return t === 0 ? "\u2013" : (100 * c.pass / t).toFixed(1) + "%";
  }

  function slug(s) {
    var t = s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "");
    return ("sec-" + t).replace(/-+$/, "");
  }

  function countAttrs(c, a) {
    a["data-pass"] = c.pass;
    a["data-fail"] = c.fail;
    a["data-skip"] = c.skip;
    a["data-expected-fail"] = c.expected_fail;
    a["data-total"] = total(c);
    a["data-js-total"] = total(c);
    return a;
  }

  function bar(c) {
    var t = total(c);
    var text = SEGMENTS.map(function (v) { return count(c, v) + " " + v; }).join(", ");
    var b = h("div", { class: "bar", role: "img", title: text, "aria-label": text });
    if (t > 0) {
      SEGMENTS.forEach(function (v) {
        var n = count(c, v);
        if (n > 0) b.appendChild(h("span", { class: "seg " + v, style: "width:" + (100 * n / t).toFixed(3) + "%" }));
      });
    }
    return b;
  }

  function numCells(c) {
    var pairs = [["pass", c.pass], ["fail", c.fail], ["expected-fail", c.expected_fail], ["skip", c.skip], ["total", total(c)]];
    var cells = pairs.map(function (p) {
      return h("td", { class: "num " + p[0] + (p[1] === 0 ? " zero" : "") }, p[1]);
    });
    cells.push(h("td", { class: "num rate" }, rate(c)));
    return cells;
  }

  function swapBody(id, tbody) {
    var t = document.getElementById(id);
    t.replaceChild(tbody, t.tBodies[0]);
  }

  function summaryValue(key) {
    var m = /^(files|run)-(.*)$/.exec(key);
    if (m) {
      var c = m[1] === "files" ? R.files : R.run_files;
      return m[2] === "total" ? total(c) : count(c, m[2]);
    }
    m = /^outcome-(.*)$/.exec(key);
    if (m) return R.outcomes[m[1]] || 0;
    if (key === "new-failures") return R.new_failures.length;
    if (key === "fixed") return R.fixed.length;
    return undefined;
  }

  function renderSummary() {
    document.querySelectorAll("#summary [data-count]").forEach(function (e) {
      var v = summaryValue(e.getAttribute("data-count"));
      if (v === undefined) return;
      e.setAttribute("data-js-value", v);
      e.textContent = v;
    });
  }

  function renderSections() {
    var tb = h("tbody");
    R.sections.forEach(function (s) {
      var link = h("td", { class: "name" }, h("a", { href: "#" + slug(s.section) }, s.section));
      var cells = [link, h("td", { class: "barcol" }, bar(s.counts))].concat(numCells(s.counts));
      tb.appendChild(h("tr", countAttrs(s.counts, { class: "section", "data-section": s.section }), cells));
    });
    swapBody("sections", tb);
  }

  function bySeverity(a, b) {
    var fa = R.results[a];
    var fb = R.results[b];
    return SEVERITY[fa.verdict] - SEVERITY[fb.verdict] || (fa.path < fb.path ? -1 : fa.path > fb.path ? 1 : 0);
  }

  function chip(i) {
    var f = R.results[i];
    var title = label(f.verdict) + (f.why ? ": " + f.why : "");
    return h("a", { class: "chip " + f.verdict, href: "#file=" + f.path, "data-path": f.path, title: title }, f.path);
  }

  function toggleRule(tr, ex, open) {
    if (open === undefined) open = ex.hidden;
    ex.hidden = !open;
    tr.classList.toggle("open", open);
    tr.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function renderRules() {
    var table = document.getElementById("rules");
    var cols = Number(table.getAttribute("data-columns"));
    var tb = h("tbody");
    var last = null;
    R.rules.forEach(function (row) {
      if (row.section !== last) {
        tb.appendChild(h("tr", { class: "section-head", id: slug(row.section) }, h("th", { colspan: cols }, row.section)));
        last = row.section;
      }
      var attrs = { class: "rule", "data-rule": row.rule, "data-section": row.section, tabindex: 0, "aria-expanded": "false" };
      var cells = [
        h("td", { class: "id" }, h("code", null, row.rule)),
        h("td", { class: "summary", title: row.summary }, h("div", { class: "clip" }, row.summary)),
        h("td", { class: "barcol" }, bar(row.counts)),
      ].concat(numCells(row.counts));
      var tr = h("tr", countAttrs(row.counts, attrs), cells);
      var idx = (filesOf[row.rule] || []).slice().sort(bySeverity);
      var list = idx.length ? h("div", { class: "chips" }, idx.map(chip)) : h("span", { class: "none" }, "No file names this rule.");
      var ex = h("tr", { class: "rule-files", "data-rule": row.rule, "data-files": idx.length, hidden: true }, h("td", { colspan: cols }, list));
      tr.addEventListener("click", function () { toggleRule(tr, ex); });
      tr.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          toggleRule(tr, ex);
        }
      });
      tb.appendChild(tr);
      tb.appendChild(ex);
    });
    swapBody("rules", tb);
  }

  function renderFiles() {
    var tb = h("tbody");
    R.results.forEach(function (f, i) {
      tb.appendChild(h("tr", { class: "file", "data-path": f.path, "data-verdict": f.verdict, "data-index": i }, [
        h("td", { class: "verdict" }, h("span", { class: "badge " + f.verdict }, label(f.verdict))),
        h("td", { class: "path", title: f.path }, h("a", { href: "#file=" + f.path }, f.path)),
        h("td", { class: "section", title: f.section }, f.section),
        h("td", { class: "why", title: f.why }, f.why),
      ]));
    });
    tb.appendChild(h("tr", { class: "empty", hidden: true }, h("td", { colspan: 4 }, "No file matches the filter.")));
    swapBody("files", tb);
    tb.addEventListener("click", function (e) {
      var tr = e.target.closest("tr.file");
      if (!tr) return;
      e.preventDefault();
      openFile(tr.getAttribute("data-path"));
    });
  }

  function applyFilter() {
    var q = filter.text.toLowerCase();
    var shown = 0;
    document.querySelectorAll("#files tr.file").forEach(function (tr) {
      var ok = (filter.verdict === "all" || tr.getAttribute("data-verdict") === filter.verdict) &&
        tr.getAttribute("data-path").toLowerCase().indexOf(q) >= 0;
      tr.hidden = !ok;
      if (ok) shown++;
    });
    document.querySelector("#files tr.empty").hidden = shown > 0;
    var n = R.results.length;
    document.getElementById("files-shown").textContent = shown === n ? n + " files" : shown + " of " + n + " files";
  }

  function wireFilters() {
    var input = document.getElementById("file-filter");
    input.addEventListener("input", function () {
      filter.text = input.value;
      applyFilter();
    });
    var buttons = document.querySelectorAll("#verdict-filters .vf");
    buttons.forEach(function (b) {
      b.addEventListener("click", function () {
        filter.verdict = b.getAttribute("data-verdict");
        buttons.forEach(function (o) { o.setAttribute("aria-pressed", o === b ? "true" : "false"); });
        applyFilter();
      });
    });
  }

  function side(title, cls, s) {
    return h("div", { class: "side " + cls, "data-outcome": s.outcome }, [
      h("h5", null, [title, h("span", { class: "outcome" }, s.outcome)]),
      h("pre", { class: "text" }, s.text === "" ? "\u2014" : s.text),
    ]);
  }

  function renderRequest(q) {
    var impl = R.implementation.name || "Implementation";
    return h("div", { class: "request " + q.verdict, "data-verdict": q.verdict, "data-action": q.action }, [
      h("div", { class: "rq-head" }, [
        h("span", { class: "badge " + q.verdict }, label(q.verdict)),
        h("span", { class: "action" }, q.action),
        q.call ? h("code", { class: "call" }, q.call) : null,
        h("span", { class: "ms" }, q.millis + " ms"),
      ]),
      h("div", { class: "sides" }, [side("Spec", "spec", q.spec), side(impl, "implementation", q.implementation)]),
      q.why ? h("p", { class: "why" }, q.why) : null,
    ]);
  }

  function renderDetail(i) {
    var f = R.results[i];
    var kids = [
      h("div", { class: "head" }, [h("span", { class: "badge " + f.verdict }, label(f.verdict)), h("span", { class: "section-name" }, f.section)]),
      h("h3", { class: "path" }, f.path),
      f.description ? h("p", { class: "description" }, f.description) : null,
      h("div", { class: "rule-list" }, f.rules.map(function (r) { return h("a", { href: "#rule=" + r }, h("code", null, r)); })),
      f.why ? h("p", { class: "why" }, f.why) : null,
      h("h4", null, "Requests (" + f.requests.length + ")"),
      f.requests.map(renderRequest),
      h("h4", null, "Program"),
      h("pre", { class: "program" }, f.program),
    ];
    if (f.sent && f.sent !== f.program) {
      kids.push(h("h4", null, "Sent to the implementation (" + R.implementation.dialect + ")"));
      kids.push(h("pre", { class: "sent" }, f.sent));
    }
    return h("section", { class: "detail", id: "detail-" + i, "data-path": f.path, "data-verdict": f.verdict, hidden: true }, kids);
  }

  function detailFor(i) {
    if (!built[i]) {
      built[i] = renderDetail(i);
      document.getElementById("detail-list").appendChild(built[i]);
    }
    return built[i];
  }

  function setHash(h) {
    try {
      history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
    } catch (e) {
      // Some browsers refuse replaceState on file: URLs; the page works without it.
    }
  }

  function openFile(path) {
    var i = indexOf[path];
    if (i === undefined) return;
    Object.keys(built).forEach(function (k) { built[k].hidden = true; });
    detailFor(i).hidden = false;
    document.getElementById("details-title").textContent = "File " + (i + 1) + " of " + R.results.length;
    document.getElementById("details").hidden = false;
    document.getElementById("backdrop").hidden = false;
    document.getElementById("detail-list").scrollTop = 0;
    document.querySelectorAll("#files tr.file.current").forEach(function (tr) { tr.classList.remove("current"); });
    var row = document.querySelector('#files tr.file[data-index="' + i + '"]');
    if (row) row.classList.add("current");
    setHash("file=" + path);
  }

  function closeDetails() {
    if (document.getElementById("details").hidden) return;
    document.getElementById("details").hidden = true;
    document.getElementById("backdrop").hidden = true;
    setHash("");
  }

  function openRule(id) {
    closeDetails();
    var tr = document.querySelector('#rules tr.rule[data-rule="' + CSS.escape(id) + '"]');
    if (!tr) return;
    toggleRule(tr, tr.nextElementSibling, true);
    tr.scrollIntoView({ block: "center" });
    setHash("rule=" + id);
  }

  function route() {
    var hash = decodeURIComponent(location.hash.slice(1));
    if (hash.indexOf("file=") === 0) openFile(hash.slice(5));
    else if (hash.indexOf("rule=") === 0) openRule(hash.slice(5));
  }

  function wireDetails() {
    document.getElementById("details-close").addEventListener("click", closeDetails);
    document.getElementById("backdrop").addEventListener("click", closeDetails);
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape") closeDetails();
    });
    // Every in-page link to a file or a rule goes through the router, so a link opens the
    // drawer even when the hash already names that file.
    document.addEventListener("click", function (e) {
      var a = e.target.closest('a[href^="#file="], a[href^="#rule="]');
      if (!a) return;
      e.preventDefault();
      e.stopPropagation();
      var target = a.getAttribute("href").slice(1);
      if (target.indexOf("file=") === 0) openFile(target.slice(5));
      else openRule(target.slice(5));
    }, true);
    window.addEventListener("hashchange", route);
  }

  try {
    R = JSON.parse(document.getElementById("results").textContent);
    R.results.forEach(function (f, i) {
      indexOf[f.path] = i;
      f.rules.forEach(function (id) { (filesOf[id] = filesOf[id] || []).push(i); });
    });
    renderSummary();
    renderSections();
    renderRules();
    renderFiles();
    wireFilters();
    wireDetails();
    // Details of every file that did not pass are built now, hidden: they are what a
    // reader opens, and a test reading the DOM can see them without clicking.
    R.results.forEach(function (f, i) { if (f.verdict !== "pass") detailFor(i); });
    route();
    root.setAttribute("data-js", "ready");
  } catch (err) {
    root.setAttribute("data-js", "error: " + err);
    throw err;
  }
})();
