/// The report's inline style sheet and script: the page loads nothing from anywhere.
///
/// The script only enhances (sortable tables, "expand all" stacks) and reports that it ran
/// (`data-ok` on the root element, for the browser test); the charts are server-side SVG and
/// every section reads the same with JavaScript off. The script sits in a CDATA section and
/// the style sheet avoids `<` and `&`, so the page stays well-formed XML.
enum HTMLAssets {
  static let style = """
    :root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1c2230;--muted:#5d6678;--card:#ffffff;\
    --line:#dde2ea;--grid:#e8ebf0;--accent:#3867d6;--freed:#2f9e5b;--late:#c58f00;\
    --leaked:#d64541;--pending:#6d7fa6;--stuck:#e07b24;--never:#9b59b6;--depth:#3867d6;\
    --band:#3867d6;--false:#2f9e5b;--true:#d64541;--mark:#8b6f47;--code:#eef1f5}
    @media (prefers-color-scheme:dark){:root{--bg:#12151a;--fg:#e4e8ef;--muted:#98a2b3;\
    --card:#1b1f26;--line:#303642;--grid:#262b34;--accent:#7aa2ff;--freed:#4cc47e;\
    --late:#e8b83a;--leaked:#ff6b64;--pending:#98a8cc;--stuck:#ff9d4d;--never:#c38be0;\
    --depth:#7aa2ff;--band:#7aa2ff;--false:#4cc47e;--true:#ff6b64;--mark:#c9a97a;--code:#232833}}
    *{box-sizing:border-box}
    body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,\
    "Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
    main{max-width:1080px;margin:0 auto;padding:24px 20px 48px}
    h1{font-size:24px;margin:0 0 4px}
    h2{font-size:18px;margin:32px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
    h3{font-size:15px;margin:18px 0 6px}
    p{margin:6px 0}
    code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;\
    font-size:12.5px}
    .muted{color:var(--muted)}
    .verdict{font-size:15px;margin:12px 0 0}
    .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(128px,1fr));gap:10px}
    .card{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--accent);\
    border-radius:8px;padding:10px 12px}
    .card .n{font-size:26px;font-weight:650;line-height:1.1}
    .card .k{font-weight:600}
    .card .m{color:var(--muted);font-size:12px}
    .card.zero .n{color:var(--muted);font-weight:400}
    .s-freed{border-left-color:var(--freed)}.s-late{border-left-color:var(--late)}
    .s-leaked{border-left-color:var(--leaked)}.s-pending{border-left-color:var(--pending)}
    .s-stuck{border-left-color:var(--stuck)}.s-neverReleased{border-left-color:var(--never)}
    .s-falseLeaks{border-left-color:var(--false)}.s-trueLeaks{border-left-color:var(--true)}
    .panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px;\
    margin:10px 0}
    svg.chart{display:block;width:100%;height:auto;max-width:100%;overflow:visible}
    svg.chart text{fill:var(--muted);font:11px system-ui,sans-serif}
    svg.chart .grid{stroke:var(--grid);stroke-width:1}
    svg.chart .axis{stroke:var(--line);stroke-width:1}
    svg.chart .depth{fill:var(--depth);fill-opacity:.22;stroke:var(--depth);stroke-width:1.4;\
    stroke-linejoin:round}
    svg.chart .mark-line{stroke:var(--mark);stroke-width:1;stroke-dasharray:4 3}
    svg.chart text.mark-label{fill:var(--mark);font-weight:600}
    svg.chart .check-guide{stroke-width:1;stroke-dasharray:2 3;opacity:.7}
    svg.chart .check-guide.false-leak{stroke:var(--false)}
    svg.chart .check-guide.true-leak{stroke:var(--true)}
    svg.chart .band{fill:var(--band);fill-opacity:.28;stroke:var(--band);stroke-width:1}
    svg.chart .band.open{stroke-dasharray:3 2;fill-opacity:.14}
    svg.chart .check-marker.false-leak{fill:var(--false);stroke:var(--card);stroke-width:1.5}
    svg.chart .check-marker.true-leak{fill:var(--true);stroke:var(--card);stroke-width:1.5}
    svg.chart text.lane-label{fill:var(--fg)}
    svg.chart .hist-bar{fill:var(--accent);fill-opacity:.75}
    svg.chart .hist-bar:hover,svg.chart .band:hover{fill-opacity:1}
    svg.chart .pct{stroke:var(--fg);stroke-width:1;stroke-dasharray:3 3;opacity:.6}
    svg.chart text.pct-label{fill:var(--fg)}
    .legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:var(--muted);margin:6px 0 0}
    .legend span::before{content:"";display:inline-block;width:12px;height:10px;margin-right:5px;\
    vertical-align:-1px;border-radius:2px;background:var(--c)}
    .legend .l-depth{--c:var(--depth)}.legend .l-band{--c:var(--band)}
    .legend .l-false{--c:var(--false)}.legend .l-true{--c:var(--true)}.legend .l-mark{--c:var(--mark)}
    table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);\
    border-radius:8px;overflow:hidden;font-size:13px}
    th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
    th{font-weight:600;background:var(--code)}
    td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
    td.num{white-space:nowrap}
    .table-wrap{overflow-x:auto;margin:10px 0;border-radius:8px}
    table.sortable th{cursor:pointer}
    table.sortable th[aria-sort="ascending"]::after{content:" \\25B2"}
    table.sortable th[aria-sort="descending"]::after{content:" \\25BC"}
    tr:last-child td{border-bottom:none}
    .badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;\
    color:#fff;background:var(--accent);margin-right:6px}
    .k-leaked{background:var(--leaked)}.k-trueLeak{background:var(--true)}
    .k-stuck{background:var(--stuck)}.k-neverReleased{background:var(--never)}
    .k-falseLeak{background:var(--false)}
    details.finding{background:var(--card);border:1px solid var(--line);border-radius:8px;\
    margin:8px 0;padding:0}
    details.finding>summary{cursor:pointer;padding:10px 14px;list-style-position:inside}
    details.finding>div{padding:0 14px 12px}
    ol.stack{margin:6px 0;padding:8px 8px 8px 36px;background:var(--code);border-radius:6px;\
    overflow-x:auto}
    ol.stack li{white-space:pre-wrap;word-break:break-all}
    ol.stack .loc{color:var(--muted)}
    ul.examples{margin:6px 0;padding-left:20px}
    details.holders{margin:6px 0}
    details.holders>summary{cursor:pointer;font-weight:600}
    pre.holder-path{margin:6px 0;padding:8px;background:var(--code);border-radius:6px;\
    white-space:pre-wrap;word-break:break-all}
    .note{color:var(--muted);font-style:italic}
    button#expand-all{font:inherit;font-size:12px;padding:3px 10px;border-radius:6px;\
    border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer}
    footer{margin-top:40px;color:var(--muted);font-size:12px}
    """

  static let script = """
    (function () {
      function cellValue(row, index) {
        var cell = row.cells[index];
        if (!cell) return "";
        var v = cell.getAttribute("data-v");
        return v === null ? cell.textContent : v;
      }
      function sortBy(table, index, th) {
        var numeric = th.classList.contains("num");
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        var headers = table.tHead.rows[0].cells;
        for (var i = 0; i < headers.length; i++) headers[i].removeAttribute("aria-sort");
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index), y = cellValue(b, index);
          var order = numeric ? Number(x) - Number(y) : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      }
      document.querySelectorAll("table.sortable").forEach(function (table) {
        if (!table.tHead) return;
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
          th.tabIndex = 0;
          th.addEventListener("click", function () { sortBy(table, index, th); });
          th.addEventListener("keydown", function (e) {
            if (e.key === "Enter") sortBy(table, index, th);
          });
        });
      });
      var expand = document.getElementById("expand-all");
      if (expand) {
        expand.hidden = false;
        expand.addEventListener("click", function () {
          var all = document.querySelectorAll("details.finding");
          var open = expand.getAttribute("data-open") !== "1";
          all.forEach(function (d) { d.open = open; });
          expand.setAttribute("data-open", open ? "1" : "0");
          expand.textContent = open ? "Collapse all" : "Expand all";
        });
      }
      var rendered = 0;
      document.querySelectorAll("svg.chart").forEach(function (svg) {
        var box = svg.getBoundingClientRect();
        var plot = svg.querySelector(".plot");
        if (box.width > 0 && box.height > 0 && plot && plot.getBBox().width > 0) rendered++;
      });
      document.documentElement.setAttribute("data-rendered-charts", String(rendered));
      document.documentElement.setAttribute("data-ok", "1");
    })();
    """
}
