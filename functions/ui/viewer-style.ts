/** `GET /ui/viewer.css`: the timeline viewer's stylesheet (no external fonts or images). */
export const VIEWER_CSS = `
:root{--fg:#1d2330;--muted:#5d6675;--line:#d9dde4;--bg:#f6f7f9;--card:#fff;--accent:#2458d3;
--ok:#1f7a3a;--warn:#9a5b00;--bad:#b3261e;--code:#f0f2f5;color-scheme:light}
*{box-sizing:border-box}
[hidden]{display:none!important}
html,body{margin:0;padding:0}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
button,input,select{font:inherit}
button{cursor:pointer;border:1px solid var(--line);background:var(--card);border-radius:6px;padding:.3rem .7rem}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
input,select{border:1px solid var(--line);border-radius:6px;padding:.3rem .5rem;background:#fff;max-width:100%}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:13px}
pre{background:var(--code);border-radius:6px;padding:.5rem .6rem;margin:.3rem 0 0;overflow:auto;max-height:24rem;white-space:pre-wrap;word-break:break-word}
.top{display:flex;align-items:center;gap:.8rem;padding:.6rem 1rem;background:#1d2330;color:#fff;flex-wrap:wrap}
.top a{color:#fff;text-decoration:none}
.top .brand{font-weight:700;font-size:17px}
.top .ver{color:#aab3c2;font-size:13px}
.top nav{margin-left:auto;display:flex;gap:.8rem;align-items:center}
.top nav button{background:transparent;color:#fff;border-color:#596274}
main{max-width:1000px;margin:0 auto;padding:1rem}
h1{font-size:20px;margin:.2rem 0 .8rem}
h1 small{font-weight:400;color:var(--muted);font-size:14px;word-break:break-all}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem;margin-bottom:1rem}
.notice{border-left:4px solid var(--accent)}
.notice.error{border-left-color:var(--bad)}
.notice.error strong{color:var(--bad)}
.toolbar{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center;margin-bottom:.8rem}
.toolbar label{display:flex;gap:.3rem;align-items:center}
table.sessions{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px}
table.sessions th,table.sessions td{text-align:left;padding:.45rem .6rem;border-top:1px solid var(--line);vertical-align:top}
table.sessions th{border-top:0;font-size:13px;color:var(--muted);font-weight:600}
table.sessions td.id a{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;word-break:break-all}
.badge{display:inline-block;font-size:12px;font-weight:600;border-radius:999px;padding:.05rem .5rem;border:1px solid currentColor;white-space:nowrap}
.badge.active,.badge.running,.badge.in_progress{color:var(--accent)}
.badge.completed,.badge.success{color:var(--ok)}
.badge.failed,.badge.error,.badge.declined{color:var(--bad)}
.badge.other{color:var(--warn)}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.4rem 1rem;margin:0}
.facts div{min-width:0}
.facts dt{font-size:12px;color:var(--muted)}
.facts dd{margin:0;word-break:break-word}
.stream{display:flex;align-items:center;gap:.4rem;font-size:13px;color:var(--muted);margin:.2rem 0 .8rem}
.stream .dot{width:.6rem;height:.6rem;border-radius:50%;background:#aab3c2}
.stream[data-state=live] .dot{background:var(--ok)}
.stream[data-state=reconnecting] .dot,.stream[data-state=connecting] .dot{background:var(--warn)}
.stream[data-state=error] .dot{background:var(--bad)}
ol.timeline,ol.items{list-style:none;margin:0;padding:0}
li.turn{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:8px;margin:0 0 .8rem;padding:.6rem .8rem}
li.turn.completed{border-left-color:var(--ok)}
li.turn.failed{border-left-color:var(--bad)}
.turn-head{display:flex;flex-wrap:wrap;gap:.3rem .7rem;align-items:baseline;margin-bottom:.3rem}
.turn-head h2{font-size:16px;margin:0}
.usage,.cost,.meta{font-size:13px;color:var(--muted)}
.cost{font-weight:600;color:var(--fg)}
.turn-error{color:var(--bad);white-space:pre-wrap}
li.item{border-top:1px solid var(--line);padding:.45rem 0}
li.item:first-child{border-top:0}
.item-head{display:flex;flex-wrap:wrap;gap:.3rem .6rem;align-items:baseline;font-size:13px}
.item-head .kind{font-weight:700;text-transform:uppercase;letter-spacing:.03em;font-size:11px;color:var(--muted)}
.item-head .name{font-weight:600}
.text{white-space:pre-wrap;word-break:break-word;margin-top:.2rem}
.item-reasoning .text,.item-harness .text{color:var(--muted);font-style:italic}
.item-error .text{color:var(--bad)}
.output{margin-top:.3rem}
.item-outputs:not(:empty){margin:.3rem 0 0 .2rem;padding-left:.7rem;border-left:2px solid var(--line)}
.item-outputs li.item{border-top:0;padding-bottom:0}
.output .meta{margin-top:.2rem}
ul.changes{margin:.2rem 0 0;padding-left:1.2rem}
li.marker{margin:0 0 .8rem;padding:.45rem .8rem;border:1px dashed var(--line);border-radius:8px;background:#fbfbfc;font-size:14px}
li.marker.boundary{border:1px solid #c9b37a;background:#fff8e6}
li.marker.reset{border:1px solid #b9a3d9;background:#f6f0ff}
li.marker.error{border:1px solid #e3a39d;background:#fff1f0;color:var(--bad)}
li.marker.result{border:2px solid var(--ok);background:#effaf2}
li.marker.result.failed{border-color:var(--bad);background:#fff1f0}
li.marker .title{font-weight:700}
.empty{color:var(--muted);font-style:italic}
form.key{display:flex;gap:.5rem;flex-wrap:wrap;margin-top:.6rem}
form.key input{flex:1 1 16rem}
.session-title{margin:-.4rem 0 .8rem;color:var(--muted);word-break:break-word}
table.sessions td.title{color:var(--muted);max-width:22rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.controls{display:flex;flex-direction:column;gap:.5rem}
.live-state{font-weight:600}
.live-state::before{content:"";display:inline-block;width:.6rem;height:.6rem;border-radius:50%;margin-right:.4rem;background:#aab3c2}
.live-state[data-state=running]::before,.live-state[data-state=waiting]::before{background:var(--accent)}
.live-state[data-state=awaiting_approval]::before,.live-state[data-state=awaiting_plan_approval]::before{background:var(--warn)}
.live-state[data-state=completed]::before{background:var(--ok)}
.live-state[data-state=interrupted]::before{background:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}
.actions .question{flex:1 1 100%;color:var(--bad)}
button.danger{color:var(--bad);border-color:var(--bad)}
form.composer{display:flex;gap:.4rem;flex-wrap:wrap}
form.composer textarea{flex:1 1 16rem;min-width:0;font:inherit;border:1px solid var(--line);border-radius:6px;padding:.3rem .5rem}
#action-message[data-error]{color:var(--bad)}
.turn-actions{margin-left:auto}
.turn-actions button{font-size:12px;padding:.1rem .5rem}
.turn-input{border-left:3px solid var(--accent);background:#f3f6fd;border-radius:4px;padding:.3rem .6rem;margin:.2rem 0 .4rem}
.turn-input .kind{font-weight:700;text-transform:uppercase;font-size:11px;color:var(--muted)}
.turn-input .follow-up{color:var(--muted)}
img.input-image{max-width:12rem;max-height:9rem;border:1px solid var(--line);border-radius:4px;margin-top:.3rem}
li.item[data-waiting]>.item-head::after{content:"command still running";color:var(--accent);font-weight:600}
@media (max-width:640px){
  main{padding:.6rem}
  table.sessions thead{display:none}
  table.sessions,table.sessions tbody,table.sessions tr,table.sessions td{display:block;width:100%}
  table.sessions tr{border-top:1px solid var(--line);padding:.4rem 0}
  table.sessions td{border:0;padding:.1rem .6rem}
  table.sessions td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:12px}
  li.turn{padding:.5rem .6rem}
  pre{max-height:16rem}
}
`
