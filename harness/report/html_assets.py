"""report.html's one stylesheet and one script, inlined into the page.

The report must open offline, from a CI artifact or a certification bundle
years later: no external stylesheet, font, image or script. At the size of
the suite (a few hundred passes x a hundred graphs) a static page is a wall,
so a small script (:data:`JS`, vanilla, no library: nothing to fetch or
vendor) adds what a reader needs to find their way: sortable summary
tables, one filter bar (pass, graph, outcome) that narrows the summary, the
matrix and the per-pass details together (its state can be given in the
URL: ``report.html?pass=xnnpack&out=n``), and a link to a pass or failure
that opens its collapsed ``<details>``. Without the script every section is
still there, only unfiltered: it enhances, it renders nothing.
"""

from __future__ import annotations

__all__ = ["CSS", "JS"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{padding:0 24px 40px;max-width:1800px}
h1{font-size:20px;margin:0}h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #d9dde3;padding-bottom:4px}
.banner{padding:14px 24px;color:#fff}.banner.PASS{background:#1e7e34}.banner.FAIL{background:#b3261e}
.banner.INCOMPLETE{background:#8a5a00}.banner .sub{opacity:.9;font-size:13px;margin-top:4px}
.notice{background:#fff4ce;border:2px solid #c98a00;padding:10px 14px;margin:14px 0;font-weight:600}
nav{margin:10px 0;font-size:13px}nav a{margin-right:14px;color:#2450a6}
.tiles{display:flex;gap:10px;flex-wrap:wrap;margin:14px 0}
.tile{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:8px 14px;min-width:84px}
.tile b{display:block;font-size:20px}.tile span{font-size:12px;color:#5b6472}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #d9dde3;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef0f4;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
.filters{position:sticky;top:0;z-index:5;background:#f6f7f9;border-bottom:1px solid #d9dde3;padding:8px 0;display:flex;gap:14px;flex-wrap:wrap;align-items:center;font-size:13px}
.filters input[type=search]{width:220px;padding:3px 6px}.filters select{padding:2px 4px}
.filters .shown{color:#5b6472}
table.sum td.n,table.sum th.n{text-align:right;font-variant-numeric:tabular-nums}
table.sum td.z{color:#a0a6b0}table.sum tfoot td{font-weight:600;background:#eef0f4}
table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
table.sortable th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
td.n.new b{color:#b3261e}td.n.known b{color:#3b6491}td.n.warn b{color:#8a5a00}
.sumgrid{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
.sumbox{max-height:70vh;overflow:auto;border:1px solid #d9dde3;content-visibility:auto;contain-intrinsic-size:auto 400px}
.sumbox thead th{position:sticky;top:0;z-index:1}
.mbox{max-height:78vh;overflow:auto;border:1px solid #d9dde3;margin-bottom:12px}
table.matrix{font-size:12px}table.matrix td{padding:3px 6px;min-width:56px}
table.matrix th{font-size:12px;font-weight:600}table.matrix td .ids{font-size:10.5px}
table.matrix thead th{position:sticky;top:0;z-index:2}
table.matrix tbody th{position:sticky;left:0;z-index:1;background:#eef0f4}
table.matrix thead th:first-child{left:0;z-index:3}
table.matrix thead tr{background:#eef0f4}
table.matrix th.g{width:24px;height:150px;vertical-align:bottom;padding:0;min-width:24px;max-width:24px;background:transparent}
table.matrix th.g>div{transform:translate(9px,-6px) rotate(-60deg);transform-origin:left bottom;width:22px;white-space:nowrap;font-weight:500;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
table.matrix td a{color:inherit;text-decoration:none;display:block}
.pn{max-width:320px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}table.matrix.compact .pn{width:320px}
.mhead{position:sticky;top:0;z-index:4}table.matrix.compact{width:max-content}
.mchunk{content-visibility:auto}.mchunk table.matrix{margin-top:-1px}
table.matrix.compact td{min-width:0;width:24px;max-width:24px;padding:0;height:20px;text-align:center;font-size:10.5px;font-weight:700;overflow:hidden}
table.matrix:not(.compact) td.ok::after{content:"ok";font-weight:600;font-size:11px;text-transform:uppercase}
table.matrix:not(.compact) td.na::after{content:"n/a";font-size:11px}
td.ok{background:#d4edda}td.fail{background:#f5c2c0}td.error{background:#c9a3e6}td.warn{background:#ffe8a3}
td.known{background:#d6e4f0}td.na{background:#eceff3;color:#6b7280}td.none{background:#fff}
.v{font-weight:600;font-size:11px;text-transform:uppercase;letter-spacing:.03em}
.ids{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border:1px solid #d9dde3;font-size:12px}
details.pd{background:#fff;border:1px solid #d9dde3;margin:4px 0}
details.pd>summary{padding:6px 10px;cursor:pointer;font-weight:600}
details.pd[open]>summary{border-bottom:1px solid #d9dde3}details.pd>div{padding:4px 12px 8px}
details.pd:target,article.failure:target{outline:3px solid #2450a6}
article.failure{background:#fff;border:1px solid #d9dde3;border-left:5px solid #b3261e;margin:10px 0;padding:8px 12px}
article.failure.warning{border-left-color:#c98a00}article.failure.known{border-left-color:#5b7fa6}
article.failure.error{border-left-color:#7b3fb0}
article h3{font-size:14px;margin:0 0 4px}.chk{margin:6px 0 0}.chk code{font-weight:600}.badge{font-size:11px;padding:1px 6px;border-radius:3px;background:#eef0f4;margin-left:6px}
pre{background:#f3f4f6;padding:8px;overflow-x:auto;font-size:12px;margin:6px 0;white-space:pre-wrap}
.bar{background:#7aa2d6;height:10px;display:inline-block;vertical-align:middle}
.bar.red{background:#d9534f}
img.plot{max-width:100%;background:#fff;border:1px solid #d9dde3;margin:6px 0}
.muted{color:#6b7280}
.tiles.gate .tile{border-width:2px}.tile.new b{color:#b3261e}.tile.known b{color:#3b6491}
.tile.warn b{color:#8a5a00}.tile.stale b{color:#6b4a00}.tile.zero b{color:#1d2330}
.ids .o-fail,.ids .o-error{color:#8f1d17;font-weight:700}.ids .o-known{color:#2f557f}.ids .o-warning{color:#6b4a00}
.ids i{font-style:normal;font-size:9.5px;opacity:.8}
.badge.o-fail{background:#f5c2c0}.badge.o-error{background:#c9a3e6}.badge.o-known{background:#d6e4f0;color:#2f557f}
.badge.o-warning{background:#ffe8a3;color:#6b4a00}
.nx{font-size:10px;font-weight:600;padding:0 4px;margin-left:4px;border-radius:3px;background:#ffe8a3;color:#6b4a00;white-space:nowrap}
[hidden]{display:none!important}
"""

# content-visibility:auto on the matrix's row chunks and the summary boxes: the browser lays out the
# cells that scroll into view, not tens of thousands of them before the first screen shows.
# Rows and sections carry data-p (pass name, lower case) and data-f (outcome flags: n new, w worsened,
# k known, e error, a warning, x not exercised); graph headers carry data-g. Hiding a graph column
# writes nth-child rules into one <style>: one rule per column instead of touching every cell.
JS = r"""
(function(){
"use strict";
var $=function(s,r){return Array.prototype.slice.call((r||document).querySelectorAll(s));};
function num(td){var v=td.getAttribute("data-v");return v===null?NaN:parseFloat(v);}
function sortBy(th){
  var table=th.closest("table"),body=table.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
  var dir=th.getAttribute("aria-sort")==="descending"?"ascending":"descending";
  $("th[aria-sort]",table).forEach(function(h){h.removeAttribute("aria-sort");});
  th.setAttribute("aria-sort",dir);
  var rows=Array.prototype.slice.call(body.rows),sign=dir==="ascending"?1:-1;
  rows.sort(function(a,b){
    var x=a.cells[i],y=b.cells[i],nx=num(x),ny=num(y);
    if(!isNaN(nx)||!isNaN(ny)){return sign*((isNaN(nx)?-1:nx)-(isNaN(ny)?-1:ny));}
    return sign*x.textContent.localeCompare(y.textContent);
  });
  rows.forEach(function(r){body.appendChild(r);});
}
$("table.sortable thead th").forEach(function(th){th.addEventListener("click",function(){sortBy(th);});});

var q=document.getElementById("f-pass"),g=document.getElementById("f-graph"),o=document.getElementById("f-out");
var hideOk=document.getElementById("f-hideok"),shown=document.getElementById("f-shown");
var colStyle=document.createElement("style");document.head.appendChild(colStyle);
function keep(el,text,flag){
  var p=el.getAttribute("data-p")||"",f=el.getAttribute("data-f")||"";
  return p.indexOf(text)>=0&&(!flag||f.indexOf(flag)>=0);
}
function apply(){
  if(!q){return;}
  var text=q.value.trim().toLowerCase(),gt=g.value.trim().toLowerCase(),flag=o.value,rules=[],rows=0,total=0;
  $("[data-p]").forEach(function(el){var k=keep(el,text,flag);el.hidden=!k;if(el.tagName==="DETAILS"){total++;rows+=k?1:0;}});
  $(".mbox").forEach(function(t){
    var heads=$("thead th.g",t),live=$("tbody tr",t).filter(function(r){return !r.hidden;});
    heads.forEach(function(th,ci){
      var name=th.getAttribute("data-g")||"",hide=gt&&name.indexOf(gt)<0;
      if(!hide&&hideOk&&hideOk.checked){
        hide=!live.some(function(r){var c=r.cells[ci+1];return c&&/fail|error|warn|known/.test(c.className);});
      }
      if(hide){rules.push("#"+t.id+" tr>:nth-child("+(ci+2)+")");}
    });
  });
  colStyle.textContent=rules.length?rules.join(",")+"{display:none}":"";
  if(shown){shown.textContent=(text||gt||flag||(hideOk&&hideOk.checked))?rows+" of "+total+" passes shown":"";}
}
var qs=new URLSearchParams(location.search);  // report.html?pass=xnnpack&graph=conv&out=n&failed=1: a view to share
if(q){q.value=qs.get("pass")||"";g.value=qs.get("graph")||"";o.value=qs.get("out")||"";
  if(hideOk){hideOk.checked=qs.get("failed")==="1";}if(qs.toString()){apply();}}
[q,g].forEach(function(el){if(el){el.addEventListener("input",apply);}});
[o,hideOk].forEach(function(el){if(el){el.addEventListener("change",apply);}});

function reveal(){
  var id=decodeURIComponent(location.hash.slice(1)),el=id&&document.getElementById(id);
  if(!el){return;}
  for(var p=el;p;p=p.parentElement){if(p.tagName==="DETAILS"){p.open=true;}if(p.hidden){p.hidden=false;}}
  el.scrollIntoView();
}
window.addEventListener("hashchange",reveal);
reveal();
})();
"""
