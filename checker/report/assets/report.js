// sse-check HTML report: the details panel, sortable findings, the x-axis toggle.
// Everything from the capture is inserted with textContent, never as markup.
(function () {
  "use strict";
  var cache = new WeakMap();

  function dataOf(section) {
    if (!cache.has(section)) {
      var node = section.querySelector("script.capture-data");
      cache.set(section, node ? JSON.parse(node.textContent) : { findings: [], events: {} });
    }
    return cache.get(section);
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function pretty(raw) {
    try { return JSON.stringify(JSON.parse(raw), null, 2); } catch (e) { return raw; }
  }

  function findingsAt(data, index) {
    var out = [];
    data.findings.forEach(function (f, n) {
      if (f.position.event_index === index) out.push(n);
    });
    return out;
  }

  function card(f) {
    var box = el("div", "card");
    var head = el("div");
    head.appendChild(el("span", "sev sev-" + f.severity, f.severity));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(el("b", "d-code", f.code));
    head.appendChild(document.createTextNode(" " + f.name));
    box.appendChild(head);
    box.appendChild(el("p", "d-message", f.message));
    var dl = el("dl");
    function row(term, value) {
      if (value === undefined || value === null || value === "") return;
      dl.appendChild(el("dt", null, term));
      dl.appendChild(el("dd", null, value));
    }
    var where = f.where + (f.position.event_index !== null ? "  (event #" + f.position.event_index + ")" : "  (the stream)");
    row("line:byte", where);
    row("event", f.position.event_type);
    row("clients", f.affected || "none it breaks or degrades here");
    row("known deviation", f.known_deviation);
    row("occurrences", f.occurrences > 1 ? f.occurrences : null);
    row("pointer", f.pointer);
    box.appendChild(dl);
    return box;
  }

  function select(section, numbers, index) {
    section.querySelectorAll(".selected").forEach(function (n) { n.classList.remove("selected"); });
    numbers.forEach(function (n) {
      var tr = section.querySelector('tr[data-f="' + n + '"]');
      if (tr) tr.classList.add("selected");
    });
    if (index !== null) {
      section.querySelectorAll('.mark[data-i="' + index + '"], .fmark[data-i="' + index + '"]').forEach(function (n) {
        n.classList.add("selected");
      });
    }
  }

  function show(section, numbers, index) {
    var data = dataOf(section);
    var panel = section.querySelector(".details");
    if (!panel) return;
    var list = panel.querySelector(".d-findings");
    list.textContent = "";
    var codes = [];
    numbers.forEach(function (n) {
      var f = data.findings[n];
      if (!f) return;
      codes.push(f.code);
      list.appendChild(card(f));
    });
    var ev = index !== null ? data.events[String(index)] : null;
    var where = index !== null ? "event #" + index : "the stream as a whole";
    var title = codes.length ? codes.join(", ") + " at " + where : where;
    panel.querySelector(".d-title").textContent = title;
    var info = panel.querySelector(".d-event");
    var raw = panel.querySelector(".d-raw");
    if (ev) {
      var text = "event #" + index + " · " + ev.type + " · line " + ev.line + ", byte " + ev.byte + " · lane " + ev.lane;
      if (ev.at !== null && ev.at !== undefined) text += " · arrived after " + (ev.at * 1000).toFixed(1) + " ms";
      info.textContent = text;
      if (ev.raw === null || ev.raw === undefined) {
        raw.textContent = "(raw event not kept in this report)";
      } else {
        raw.textContent = pretty(ev.raw) + (ev.clipped ? "\n… (first " + data.clip + " bytes)" : "");
      }
      raw.hidden = false;
    } else {
      info.textContent = index !== null ? "event #" + index + " (raw event not kept in this report)" : "";
      raw.textContent = "";
      raw.hidden = true;
    }
    panel.hidden = false;
    select(section, numbers, index);
  }

  function indexOf(node) {
    var value = node.getAttribute("data-i");
    return value === null || value === "" ? null : parseInt(value, 10);
  }

  function activate(target) {
    var section = target.closest("section.capture");
    if (!section) return false;
    var node = target.closest(".fmark");
    if (node) {
      var nums = node.getAttribute("data-fs").split(" ").filter(Boolean).map(Number);
      show(section, nums, indexOf(node));
      return true;
    }
    node = target.closest(".mark");
    if (node) {
      var i = indexOf(node);
      show(section, findingsAt(dataOf(section), i), i);
      return true;
    }
    node = target.closest("tr[data-f], .flink[data-f]");
    if (node) {
      var n = Number(node.getAttribute("data-f"));
      var f = dataOf(section).findings[n];
      show(section, [n], f ? f.position.event_index : null);
      return true;
    }
    node = target.closest(".details .close");
    if (node) {
      node.closest(".details").hidden = true;
      section.querySelectorAll(".selected").forEach(function (s) { s.classList.remove("selected"); });
      return true;
    }
    return false;
  }

  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var key = th.getAttribute("data-sort");
    var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
    if (key !== "sev" && th.getAttribute("aria-sort") !== "ascending") dir = "ascending";
    table.querySelectorAll("th[data-sort]").forEach(function (h) { h.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", dir);
    var sign = dir === "ascending" ? 1 : -1;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x, y;
      if (key === "sev") { x = Number(a.dataset.sev); y = Number(b.dataset.sev); }
      else if (key === "code") { x = a.dataset.code; y = b.dataset.code; }
      else { x = a.dataset.pos; y = b.dataset.pos; }
      if (x < y) return -sign;
      if (x > y) return sign;
      return a.dataset.pos < b.dataset.pos ? -1 : 1;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function setMode(wrap, mode) {
    var svg = wrap.querySelector("svg.lanes");
    if (!svg) return;
    var suffix = mode === "time" ? "t" : "i";
    svg.setAttribute("data-mode", mode);
    svg.querySelectorAll(".mark, .fmark").forEach(function (node) {
      var x = node.getAttribute("data-x" + suffix);
      var y = node.transform.baseVal.length ? node.transform.baseVal.getItem(0).matrix.f : 0;
      node.setAttribute("data-x", x);
      node.setAttribute("transform", "translate(" + x + "," + y + ")");
    });
    svg.querySelectorAll(".bar").forEach(function (bar) {
      var x1 = Number(bar.getAttribute("data-x1" + suffix));
      var x2 = Number(bar.getAttribute("data-x2" + suffix));
      bar.setAttribute("x", x1);
      bar.setAttribute("width", Math.max(1, x2 - x1));
    });
    svg.querySelectorAll(".late-note").forEach(function (note) {
      note.setAttribute("x", note.getAttribute("data-x" + suffix));
    });
    wrap.querySelectorAll(".axis-index").forEach(function (n) { n.setAttribute("display", mode === "time" ? "none" : "inline"); });
    wrap.querySelectorAll(".axis-time").forEach(function (n) { n.setAttribute("display", mode === "time" ? "inline" : "none"); });
    wrap.querySelectorAll(".xmode button").forEach(function (b) {
      b.classList.toggle("on", b.getAttribute("data-mode") === mode);
    });
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var th = target.closest("th[data-sort]");
    if (th) { sortBy(th); return; }
    var button = target.closest(".xmode button");
    if (button) { setMode(button.closest(".lanes-wrap"), button.getAttribute("data-mode")); return; }
    activate(target);
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    if (event.key === "Enter" || event.key === " ") {
      if (activate(target)) event.preventDefault();
    } else if (event.key === "Escape") {
      document.querySelectorAll(".details").forEach(function (p) { p.hidden = true; });
    }
  });
})();
